"""Orion removed from a channel while it answers there keeps nothing of the channel.

Played end to end (the real Orion HTTP app, fake Slack and Claude, the GCS emulator): a
member mentions Orion; while Claude answers (and before it saves a note to the channel's
memory), Orion is removed from the channel, which erases the channel's memory. The turn
then saves its note, answers and ends; the channel's home keeps only the erasure's mark.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable

import pytest

from app.memory.homes import channel
from tests.e2e import channels as in_channel
from tests.e2e.channels import ADMIN, BEN, PUBLIC, mention, set_up_channels, thread_of
from tests.e2e.memory_bucket import Bucket
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_model import BOT_USER_ID
from tests.orion_server import OrionServer

HOME = channel(PUBLIC)
NOTE = {
    "command": "create",
    "path": f"/memories/channels/{PUBLIC}/launch.md",
    "file_text": "Launch: the pelican goes on Friday.",
}


@pytest.mark.parametrize(
    "removed",
    [
        events.channel_event("channel_left", PUBLIC, actor_id=ADMIN),
        events.member_left_channel(BOT_USER_ID, PUBLIC),
    ],
    ids=["channel_left", "member_left_channel"],
)
def test_orion_removed_while_answering_keeps_nothing_of_the_channel(
    orion_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    removed: dict,
) -> None:
    set_up_channels(slack)
    orion = orion_on_bucket()
    erased = threading.Event()
    claude.reply_tool_use("memory", NOTE, waits_for=erased)
    claude.reply("Noted: the pelican goes on Friday.")
    said = thread_of(mention(orion, slack, BEN, PUBLIC, "Remember: the pelican launch is Friday"))
    claude.wait_for(lambda: claude.calls, what="the turn's first Claude call")
    assert orion.post_event(removed).status_code == 200
    orion.wait_handled(removed["event_id"])
    erased.set()
    in_channel.wait_for_answer(slack, PUBLIC, said, "Noted: the pelican goes on Friday.")
    orion.wait_idle()

    names = [name for name in bucket.names() if name.startswith(HOME.prefix)]
    left = {name: bucket.read(name) or "" for name in names}
    assert list(left) == [HOME.profile_key], "nothing but the erasure's mark"
    mark = json.loads(left[HOME.profile_key])
    assert "erased_at" in mark and set(mark) <= {"version", "erased_at", "state", "mode"}
    everything = [name for name in bucket.names() if "pelican" in (bucket.read(name) or "")]
    assert everything == []
