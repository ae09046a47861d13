"""A first start of this Orion on a bucket the old Orion wrote, with the store refusing it:
the start serves degraded as before, and marks the bucket (then moves the old layout home)
once the store answers, before anything it keeps there could be taken for the old layout.

Found by the attacker (round 9): the mark was tried once, at start. The store down then,
the mark and the upgrade failed, the start served on and, the store back, kept a channel's
thread; the next start marked the bucket after it, so its upgrade took that channel's
record for the old layout's memory and moved it into the channel's memory (Claude's
files): the thread's record, and the channel's choices, gone from where Orion reads them.
"""

from __future__ import annotations

import os
import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.learning.channel_memory import choose_mode, read_choices
from app.learning.channel_mode import ChannelMode
from app.learning.conversation_record import ConversationOwner, said
from app.learning.conversations import TurnTranscript, read_conversation
from app.learning.upgrade import LAYOUT_MARKER, mark_layout, upgrade
from app.memory.key_prefixes import LEGACY_PREFIXES
from app.storage.local_directory import LocalDirectoryStore
from tests import log_events
from tests.e2e import channels
from tests.e2e.channels import ANA, PUBLIC, set_up_channels
from tests.e2e.memory_bucket import Bucket
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.layout import channel, open_conversation
from tests.orion_server import OrionServer, make_settings

DATA = Path(__file__).resolve().parents[1] / "data" / "legacy_2026_11_28" / "store"


def test_a_first_start_the_store_refused_marks_the_bucket_once_it_answers(
    gcs_proxy: FaultyProxy,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket = Bucket(gcs_emulator, gcs_bucket)
    for path in sorted(p for p in DATA.rglob("*") if p.is_file()):
        bucket.write(path.relative_to(DATA).as_posix(), path.read_text())
    set_up_channels(slack)
    settings = make_settings(
        slack, claude, gcs_memories_bucket=gcs_bucket, memory_session_retention_days=3650
    )

    gcs_proxy.add_rule("", status=503)  # down from the very start
    with OrionServer(settings, started_as_deployed=True) as orion:
        orion.wait_logged(log_events.STORE_UNAVAILABLE)
        gcs_proxy.clear_rules()
        orion.wait_logged(log_events.STORE_RECOVERED, timeout=30)
        claude.reply("The launch is on the 14th.")
        asked = channels.mention(orion, slack, ANA, PUBLIC, "when is the launch?")
        thread_ts = channels.thread_of(asked)
        channels.wait_for_answer(slack, PUBLIC, thread_ts, "The launch is on the 14th.")
        orion.wait_idle()
        # Marked, and the old layout moved home, by this process: its people are greeted
        # by name without waiting for another start.
        orion.wait_logged("memory.upgrade", timeout=30)
        assert not _old(bucket)
    record_key = channel(PUBLIC).conversation_key(thread_ts)
    record = bucket.read(record_key)
    assert record is not None and "when is the launch?" in record

    # The next start (a deploy, a scale-out) finds the bucket marked since the first.
    with OrionServer(settings, started_as_deployed=True) as orion:
        assert orion.http.get("/healthz").status_code == 200
    assert bucket.read(LAYOUT_MARKER) is not None

    assert bucket.read(record_key) == record, "the channel's thread is where Orion reads it"
    assert not [k for k in bucket.names() if k.startswith(channel(PUBLIC).memory_prefix)]


def _old(bucket: Bucket) -> list[str]:
    return [key for key in bucket.names() if key.startswith(LEGACY_PREFIXES)]


async def test_homes_kept_before_the_mark_by_the_process_that_made_it_are_not_the_old_layouts(
    tmp_path: Path,
) -> None:
    """The same, as the upgrade sees it: the bucket marked by a process started an hour
    before (the store refused it until now), whose channel thread was kept half an hour ago."""
    root = tmp_path / "store"
    shutil.copytree(DATA, root)
    store = LocalDirectoryStore(root)
    started = datetime.now(UTC) - timedelta(hours=1)
    room, thread = "C0INCIDENT1", "1796000000.000100"
    owner = ConversationOwner("U0ADMIN1", room, kind="channel")
    transcript = TurnTranscript(store, owner, thread, await open_conversation(store, owner, thread))
    transcript.add(said("user", "The postmortem is due Friday", at=started, user="U0ADMIN1"))
    await transcript.write()
    await choose_mode(store, ChannelMode.OFF, channel_id=room, by="U0ADMIN1")
    half_an_hour_ago = time.time() - 30 * 60
    for item in (root / "channels" / room).rglob("*"):
        os.utime(item, (half_an_hour_ago, half_an_hour_ago))

    await mark_layout(store, started)
    await upgrade(store)

    choices = await read_choices(store, room)
    assert choices.channel is not None and choices.channel.mode is ChannelMode.OFF
    record = await read_conversation(store, channel(room), thread)
    assert record is not None and "postmortem" in record.messages[0].text
    assert not list((root / channel(room).memory_prefix).rglob("*"))
