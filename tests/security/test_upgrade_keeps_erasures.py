"""Moving the old layout home (app/learning/upgrade.py: every start, and `orion migrate`)
against what people and operators do meanwhile, as an attacker would line them up, on the
store today's Orion wrote (tests/data/legacy_2026_11_28/):

- a member forgot everything on the new Orion before the move reached the channel thread
  they spoke in: the move must not bring their words back into the channel (its record,
  its search index, what a channel's recall hands Claude);
- Orion was removed from a channel (its memory erased) before the move: the channel's
  old threads stay gone;
- a person forgot one conversation on the new Orion before its old part moved: it stays
  forgotten;
- a person clicks Forget everything while the move is writing their home: nothing of
  theirs may come back;
- a move cut short while it deletes, and run again: nothing is left behind in the old
  layout, where Forget everything no longer looks;
- two moves at once (`orion migrate` beside a start's): neither takes the other's writes
  for a Forget everything;
- a member clicks Forget everything while the move writes the channel thread they spoke
  in: their words do not come back;
- an operator rolls a deployment back to the old Orion and forward again: the channels
  the new Orion kept meanwhile keep their admins' choices and their conversations.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.learning.channel_memory import choose_mode, erase_channel, read_choices
from app.learning.channel_mode import ChannelMode
from app.learning.channel_recall import ChannelRecallScope, ChannelRecallTool
from app.learning.conversation_record import ConversationOwner, ConversationRecord, said
from app.learning.conversations import TurnTranscript, read_conversation
from app.learning.erasure import forget_conversation, forget_everything
from app.learning.profile import Profile
from app.learning.recall import RecallTool
from app.learning.upgrade import mark_layout, upgrade
from app.learning.welcome import welcome_of
from app.memory.homes import channel, person
from app.memory.key_prefixes import LEGACY_PREFIXES
from app.memory.scopes import MemoryScope
from app.storage.local_directory import LocalDirectoryStore
from app.storage.store import StoreLayer, StoreUnreachable
from tests.layout import open_conversation

DATA = Path(__file__).resolve().parents[1] / "data" / "legacy_2026_11_28"
EXPECTED = json.loads((DATA / "expected.json").read_text())["stores"]["store"]
SAM = EXPECTED["people"][0]
CHANNEL = EXPECTED["channels"][0]
THREAD = CHANNEL["threads"][0]["thread_ts"]


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "store"
    shutil.copytree(DATA / "store", root, dirs_exist_ok=True)
    return root


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


async def _no_word_of_sam_in_the_channel(store: StoreLayer | LocalDirectoryStore) -> None:
    """The channel thread Sam spoke in keeps the others' words, none of hers nor her id,
    and a member's channel recall does not find it by her words."""
    record = await read_conversation(store, channel(CHANNEL["channel"]), THREAD)
    assert record is not None, "the thread stays the channel's"
    assert SAM["user"] not in record.authors and record.owner.user != SAM["user"]
    assert any("Monday at 2pm" in m.text for m in record.messages), "the others' words stay"
    recall = ChannelRecallTool(
        store,
        ChannelRecallScope(CHANNEL["channel"], "1795999999.000001", public=False),
        actor="U0LEGACY3",
    )
    found = await recall.call({"queries": ["please whole"]})
    assert isinstance(found, str) and found.startswith("No earlier conversation"), found


async def test_a_member_forgotten_before_the_move_gets_no_word_back_in_a_channel(
    tmp_path: Path,
) -> None:
    # Sam asked the channel to remember that she owns the launch ("for the whole channel"),
    # then forgot everything on the new Orion, before its upgrade had run (it runs in the
    # background at each start; one that failed waits for the next).
    store = LocalDirectoryStore(_copy(tmp_path))
    await forget_everything(store, SAM["user"])

    await upgrade(store)

    await _no_word_of_sam_in_the_channel(store)


async def test_a_conversation_forgotten_before_the_move_does_not_come_back(
    tmp_path: Path,
) -> None:
    # Sam came back to the old Q3 budget thread on the new Orion (its old part not moved
    # yet), then clicked Forget on it in the Home tab. The move must not bring the old
    # part back: not the conversation, not its search entry, not the welcome about it.
    root = _copy(tmp_path)
    store = LocalDirectoryStore(root)
    budget = SAM["conversations"][1]
    old = ConversationRecord.parse(
        (root / "conversations" / f"{budget['thread_ts'].replace('.', '-')}.json").read_text()
    )
    assert old is not None
    continued = ConversationRecord(old.thread_ts, old.owner, old.started)
    await store.write(
        person(SAM["user"]).conversation_key(old.thread_ts),
        continued.with_messages([said("user", "Any news on Globex?", at=old.started)]).render(),
    )
    await forget_conversation(store, SAM["user"], old.thread_ts)

    await upgrade(store)

    after = _files(root)
    assert not [k for k, v in after.items() if budget["detail"] in v or "Globex" in v]
    profile = Profile.parse(after[f"people/{SAM['user']}/profile.json"])
    assert budget["title"] not in [e.title for e in profile.conversations]
    welcome = welcome_of(profile)
    assert welcome is None or welcome.thread_ts != old.thread_ts
    recall = RecallTool(store, MemoryScope(SAM["user"], "1796999999.000001"))
    found = await recall.call({"queries": [budget["query"]]})
    assert budget["title"] not in json.dumps(found)
    assert "Lisbon" in json.dumps(await recall.call({"queries": ["recital"]})), "the rest stays"


async def test_a_channel_orion_was_removed_from_before_the_move_gets_nothing_back(
    tmp_path: Path,
) -> None:
    # Orion was removed from #legacy-launch on the new Orion (its memory erased), before
    # the upgrade had run; then someone adds it back and asks what was decided.
    root = _copy(tmp_path)
    store = LocalDirectoryStore(root)
    await erase_channel(store, CHANNEL["channel"], why="removed")

    await upgrade(store)

    room = channel(CHANNEL["channel"])
    assert await read_conversation(store, room, THREAD) is None
    recall = ChannelRecallTool(
        store,
        ChannelRecallScope(CHANNEL["channel"], "1795999999.000001", public=False),
        actor="U0LEGACY3",
    )
    found = await recall.call({"queries": [CHANNEL["threads"][0]["query"]]})
    assert isinstance(found, str) and found.startswith("There are no earlier"), found
    after = _files(root)
    assert not [k for k, v in after.items() if "Tuesday" in v or "Stripe" in v]


class _ForgetsMidMove(StoreLayer):
    """The store as the upgrade uses it: just before its first write under `before` (by
    default the person's conversations), the person clicks Forget everything (on another
    instance: the store beneath)."""

    def __init__(self, inner: LocalDirectoryStore, user: str, before: str = "") -> None:
        super().__init__(inner)
        self._user: str | None = user
        self._before = before or f"people/{user}/conversations/"

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        if self._user is not None and key.startswith(self._before):
            user, self._user = self._user, None
            await forget_everything(self.inner, user)
        return await self.inner.write(key, content, if_generation=if_generation)


async def test_forget_everything_clicked_while_the_move_writes_their_home_brings_nothing_back(
    tmp_path: Path,
) -> None:
    root = _copy(tmp_path)
    store = _ForgetsMidMove(LocalDirectoryStore(root), SAM["user"])

    await upgrade(store)

    after = _files(root)
    home = f"people/{SAM['user']}/"
    assert [k for k in after if k.startswith(home)] == [f"{home}profile.json"]
    profile = Profile.parse(after[f"{home}profile.json"])
    assert profile.erased_at is not None and profile.conversations == ()
    for detail in ("Alfama", *(c["detail"] for c in SAM["conversations"])):
        assert not [k for k, v in after.items() if detail in v], detail


@pytest.mark.parametrize("written", ["conversations/", "search.json"])
async def test_a_member_forgetting_everything_while_the_channel_moves_gets_no_word_back(
    tmp_path: Path, written: str
) -> None:
    # Sam's part has moved (the channel thread she spoke in is noted in her home); she
    # clicks Forget everything just before the move writes the thread (or the channel's
    # search index) into the channel.
    root = _copy(tmp_path)
    room = CHANNEL["channel"]
    store = _ForgetsMidMove(LocalDirectoryStore(root), SAM["user"], f"channels/{room}/{written}")

    await upgrade(store)

    await _no_word_of_sam_in_the_channel(store)


async def test_two_moves_at_once_keep_what_a_person_said_after_their_old_erasure(
    tmp_path: Path,
) -> None:
    # `orion migrate` run by hand while a new revision's start runs it too. Robin was
    # forgotten under the old layout and came back: each run writes that old erasure into
    # Robin's profile, which the other must not take for a Forget everything clicked
    # meanwhile (and take back the preference Robin told Orion since).
    root = _copy(tmp_path)
    robin = EXPECTED["people"][1]

    await asyncio.gather(upgrade(LocalDirectoryStore(root)), upgrade(LocalDirectoryStore(root)))

    after = _files(root)
    home = f"people/{robin['user']}/"
    assert json.loads(after[f"{home}memory/preferences.json"])["team"] == "Platform"
    profile = Profile.parse(after[f"{home}profile.json"])
    assert profile.erased_at is not None and profile.erased_at.isoformat() == robin["erased_at"]
    assert [e.title for e in profile.conversations] == ["Porto offsite"]
    assert "Alfama" in after[f"people/{SAM['user']}/memory/notes/travel.md"]
    assert not [k for k in after if k.startswith(("users/", "sessions/", "conversations/"))]


class _FailsFromTheSummaries(StoreLayer):
    """Storage that fails every deletion from the first of an old summary's on (a run cut
    short while it deletes what it moved); the deletions under way are let finish."""

    def __init__(self, inner: LocalDirectoryStore) -> None:
        super().__init__(inner)
        self.failing = False
        self.under_way: list[asyncio.Future[bool]] = []

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        self.failing = self.failing or key.startswith("sessions/")
        if self.failing:
            raise StoreUnreachable("the bucket stopped answering")
        deletion = asyncio.ensure_future(self.inner.delete(key, if_generation=if_generation))
        self.under_way.append(deletion)
        return await deletion


async def test_a_move_cut_short_and_run_again_leaves_nothing_forget_everything_misses(
    tmp_path: Path,
) -> None:
    # `orion migrate` exits 4 ("the store failed midway: run it again"), the operator runs
    # it again, and then Sam forgets everything: no summary of hers may be left behind in
    # the old layout, where neither the move nor Forget everything looks any more.
    root = _copy(tmp_path)
    cut_short = _FailsFromTheSummaries(LocalDirectoryStore(root))
    with pytest.raises(StoreUnreachable):
        await upgrade(cut_short)
    await asyncio.gather(*cut_short.under_way)

    await upgrade(LocalDirectoryStore(root))
    await forget_everything(LocalDirectoryStore(root), SAM["user"])

    after = _files(root)
    assert not [k for k in after if k.startswith(LEGACY_PREFIXES)], "nothing old is left"
    for detail in ("Alfama", "recital", *(c["detail"] for c in SAM["conversations"])):
        assert not [k for k, v in after.items() if detail in v], detail


def _an_hour_ago(path: Path, minutes: int = 60) -> None:
    moment = time.time() - minutes * 60
    for item in [path, *path.rglob("*")] if path.is_dir() else [path]:
        os.utime(item, (moment, moment))


async def test_a_rollback_and_forward_keeps_the_channels_the_new_orion_kept(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    root.mkdir()
    store = LocalDirectoryStore(root)
    await mark_layout(store)  # the new Orion's first start, on a bucket of its own
    await upgrade(store)
    for marker in root.glob("deployment/*"):
        _an_hour_ago(marker)
    # Half an hour ago: an admin turned Orion off in #incidents, after a thread there.
    room = "C0INCIDENT1"
    owner = ConversationOwner("U0ADMIN1", room, kind="channel")
    thread = "1796000000.000100"
    transcript = TurnTranscript(store, owner, thread, await open_conversation(store, owner, thread))
    transcript.add(
        said("user", "The outage postmortem is due Friday", at=datetime.now(UTC), user="U0ADMIN1")
    )
    await transcript.write()
    await choose_mode(store, ChannelMode.OFF, channel_id=room, by="U0ADMIN1")
    _an_hour_ago(root / "channels", minutes=30)
    # Then the deployment was rolled back to the old Orion for a while, which wrote its
    # layout again (here: all of tests/data's), and forward: the upgrade runs again.
    shutil.copytree(DATA / "store", root, dirs_exist_ok=True)

    await upgrade(store)

    choices = await read_choices(store, room)
    assert choices.channel is not None and choices.channel.mode is ChannelMode.OFF
    record = await read_conversation(store, channel(room), thread)
    assert record is not None and "postmortem" in record.messages[0].text
    assert not [k for k in _files(root) if k.startswith(f"channels/{room}/memory/")]
