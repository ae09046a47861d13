"""What is a channel's own in its memory (docs/channels.md): its change log, admins' choice,
forgetting, erasure, archiving and state; the rest of a channel's memory is a person's code."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from app.learning.channel_mode import ChannelMode
from app.learning.channel_recall import note_channel_visibility
from app.learning.conversations import forget_said
from app.learning.erasure import DELETE_CONCURRENCY, delete_all, erase_home, reindex
from app.learning.guard import Forgotten, Guard
from app.learning.person_settings import note_channel_thread
from app.learning.profile import MAX_CHANGES, Profile
from app.learning.timestamps import format_time, parse_moment, parse_time
from app.memory.change_log import MemoryChange
from app.memory.homes import channel, person, workspace_channels_key
from app.memory.scopes import ChannelMemoryScope, is_user_id, to_key, to_memory_path
from app.memory.tolerant_json import Unreadable, load_json_object
from app.observability.audit import SLACK, Action, audit, channel_scope
from app.observability.logging import get_logger
from app.storage.store import ObjectInfo, ObjectStore, PreconditionFailed, at_most, update

log = get_logger(__name__)

# What one memory view shows at most (the channel's directory holds at most 200 files).
MAX_LISTED_FILES = 200
MODE = "mode"
CHANGES = "changes"


@dataclass(frozen=True)
class ModeChoice:
    mode: ChannelMode
    by: str  # the admin who chose it
    at: datetime

    def to_json(self) -> dict[str, str]:
        return {"mode": self.mode.value, "by": self.by, "at": format_time(self.at)}

    @staticmethod
    def parse(data: object) -> ModeChoice | None:
        if not isinstance(data, dict):
            return None
        mode, by, moment = data.get("mode"), data.get("by"), parse_time(data.get("at"))
        if not isinstance(mode, str) or not is_user_id(by) or moment is None:
            return None
        try:
            return ModeChoice(ChannelMode(mode), str(by), moment)
        except ValueError:
            return None


@dataclass(frozen=True)
class ChannelChoices:
    workspace: ModeChoice | None
    channel: ModeChoice | None

    def mode(self, ceiling: ChannelMode) -> ChannelMode:
        """What Orion does in the channel: the channel's choice, else the workspace's,
        within the deployment's `ceiling`."""
        chosen = self.channel or self.workspace
        return chosen.mode.at_most(ceiling) if chosen is not None else ceiling


def channel_choice(profile: Profile) -> ModeChoice | None:
    return ModeChoice.parse(profile.section(MODE))


async def workspace_choice(store: ObjectStore) -> ModeChoice | None:
    """What the workspace's admins chose for every channel. Raises what storage raises."""
    stored = await store.read(workspace_channels_key())
    data = load_json_object(stored.content if stored else None, what="workspace_channels")
    return ModeChoice.parse(data.get(MODE))


async def read_choices(store: ObjectStore, channel_id: str) -> ChannelChoices:
    """The workspace's and the channel's choices, read at once. Raises what storage raises."""
    workspace, profile = await asyncio.gather(
        workspace_choice(store), store.read(channel(channel_id).profile_key)
    )
    return ChannelChoices(
        workspace, channel_choice(Profile.parse(profile.content if profile else None))
    )


async def choose_mode(
    store: ObjectStore, mode: ChannelMode, *, channel_id: str | None, by: str
) -> ModeChoice:
    """An admin's choice for one channel (or, `channel_id` None, the workspace)."""
    choice = ModeChoice(mode, by, datetime.now(UTC))
    if channel_id is None:

        def chosen(current: str | None) -> str:
            data = load_json_object(current, what="workspace_channels")
            return json.dumps({**data, MODE: choice.to_json()})  # other fields kept

        await update(store, workspace_channels_key(), chosen)
    else:
        await change_profile(
            store, channel_id, lambda profile: profile.with_section(MODE, choice.to_json())
        )
    scope = channel_scope(channel_id) if channel_id else "workspace"
    audit("setting", scope=scope, actor=by, what=f"channels {mode.value}")
    return choice


async def change_profile(
    store: ObjectStore, channel_id: str, change: Callable[[Profile], Profile]
) -> None:
    """The channel's profile changed (an erasure's mark stays in it). Raises
    `Unreadable` rather than write over one that cannot be read."""

    def changed(current: str | None) -> str | None:
        return change(Profile.to_update(current)).render()

    await update(store, channel(channel_id).profile_key, changed)


# --- who changed what -----------------------------------------------------------------


@dataclass(frozen=True)
class ChannelChange:
    at: datetime
    by: str  # a person's id, or SLACK
    action: Action
    what: str  # a memory path, or "everything"

    def to_json(self) -> dict[str, str]:
        return {"at": format_time(self.at), "by": self.by, "action": self.action, "what": self.what}

    @staticmethod
    def parse(item: object) -> ChannelChange | None:
        if not isinstance(item, dict):
            return None
        by, action, what = (item.get(k) for k in ("by", "action", "what"))
        moment = parse_time(item.get("at"))
        if moment is None or not (is_user_id(by) or by == SLACK) or not isinstance(what, str):
            return None
        if action not in ("write", "delete", "forget", "erase", "archive", "unarchive"):
            return None
        return ChannelChange(moment, str(by), action, what[:300])


def changes_of(profile: Profile) -> list[ChannelChange]:
    items = profile.section(CHANGES)
    parsed = [ChannelChange.parse(item) for item in (items if isinstance(items, list) else [])]
    return [change for change in parsed[:MAX_CHANGES] if change is not None]


def with_changes(changes: Sequence[ChannelChange]) -> Callable[[Profile], Profile]:
    """The change to a channel's profile that logs `changes` (newest first, bounded)."""

    def change(profile: Profile) -> Profile:
        kept = [*sorted(changes, key=lambda c: c.at, reverse=True), *changes_of(profile)]
        return profile.with_section(CHANGES, [c.to_json() for c in kept[:MAX_CHANGES]])

    return change


def turn_changes(
    channel_id: str, changes: Sequence[MemoryChange], *, by: str
) -> list[ChannelChange]:
    """What a turn's memory tool changed in the channel's memory, as log entries."""
    home = channel(channel_id)
    moment = datetime.now(UTC)
    logged = []
    for change in changes:
        if not change.key.startswith(home.memory_prefix):
            continue
        what = to_memory_path(
            ChannelMemoryScope(channel_id).channel_root + change.key[len(home.memory_prefix) :]
        )
        logged.append(ChannelChange(moment, by, "delete" if change.deleted else "write", what))
    return logged


async def record_change(
    store: ObjectStore, channel_id: str, *, action: Action, what: str, by: str
) -> None:
    change = ChannelChange(datetime.now(UTC), by, action, what[:300])
    # Not into a profile that cannot be read: the change is made, the audit log has it.
    with contextlib.suppress(Unreadable):
        await change_profile(store, channel_id, with_changes([change]))


# --- what the channel's members see and forget -------------------------------------------


@dataclass(frozen=True)
class ChannelFile:
    name: str  # relative to the channel's directory: `decisions.md`, `team/owners.md`
    size: int
    updated: datetime


@dataclass(frozen=True)
class ChannelMemory:
    files: list[ChannelFile]
    changes: list[ChannelChange]

    def last_change_of(self, path: str) -> ChannelChange | None:
        """Who last changed the file at memory path `path`, if the log still holds it."""
        return next((c for c in self.changes if c.what == path), None)


async def read_channel_memory(store: ObjectStore, channel_id: str) -> ChannelMemory:
    """The channel's files and who changed them. Raises what storage raises."""
    home = channel(channel_id)
    root = home.memory_prefix
    listing, profile = await asyncio.gather(store.list(root), store.read(home.profile_key))
    files = [
        ChannelFile(obj.key[len(root) :], obj.size, obj.updated)
        for obj in sorted(listing, key=lambda o: o.key)[:MAX_LISTED_FILES]
    ]
    return ChannelMemory(files, changes_of(Profile.parse(profile.content if profile else None)))


def channel_file_key(channel_id: str, name: object) -> str | None:
    """The store key of a file a member names (from a button's value: hostile until
    checked), if it is inside the channel's memory; else None."""
    if not isinstance(name, str) or not name or len(name) > 512:
        return None
    scope = ChannelMemoryScope(channel_id)
    try:
        key = to_key(to_memory_path(scope.channel_root + name))
    except ValueError:
        return None
    if not scope.can_write(key):
        return None
    return channel(channel_id).memory_prefix + key[len(scope.channel_root) :]


async def forget_channel_file(store: ObjectStore, channel_id: str, name: str, *, by: str) -> bool:
    """One file of the channel's memory, forgotten by a member; whether it was there."""
    key = channel_file_key(channel_id, name)
    if key is None:
        raise ValueError("not a file of this channel's memory")
    forgotten = await store.delete(key)
    if forgotten:
        what = to_memory_path(ChannelMemoryScope(channel_id).channel_root + name)
        audit("forget", scope=channel_scope(channel_id), actor=by, what=what)
        await record_change(store, channel_id, action="forget", what=what, by=by)
    return forgotten


async def forget_channel_memory(store: ObjectStore, channel_id: str, *, by: str) -> int:
    """Every file of the channel's memory, forgotten by a member; how many went."""
    listing = await store.list(channel(channel_id).memory_prefix)
    deleted = await delete_all(store, [obj.key for obj in listing])
    audit("forget", scope=channel_scope(channel_id), actor=by, what="everything", files=deleted)
    await record_change(store, channel_id, action="forget", what="everything", by=by)
    return deleted


# --- since when the channel is as it is ---------------------------------------------------


STATE = "state"


async def channel_state_since(store: ObjectStore, channel_id: str) -> datetime | None:
    """When the channel came to be as Orion last heard (added, removed, archived,
    unarchived: Slack's time of that event, or an erasure's own); None when Orion never
    heard. Raises what storage raises."""
    stored = await store.read(channel(channel_id).profile_key)
    profile = Profile.parse(stored.content if stored else None)
    times = [t for t in (_noted_since(profile), profile.erased_at) if t is not None]
    return max(times) if times else None


async def note_channel_state_since(
    store: ObjectStore, channel_id: str, moment: datetime, *, event: str
) -> None:
    """The channel is as `event` (Slack's event type) left it since `moment`; a later time already
    noted stays. Written also into an erased channel's profile (beside its erasure's time)."""

    def later(current: str | None) -> str | None:
        profile = Profile.to_update(current)
        noted = _noted_since(profile)
        if noted is not None and noted >= moment:
            return current
        since = {"since": moment.astimezone(UTC).isoformat(), "event": event[:40]}
        return profile.with_section(STATE, since).render()

    await update(store, channel(channel_id).profile_key, later)


def _noted_since(profile: Profile) -> datetime | None:
    state = profile.section(STATE)
    return parse_moment(state.get("since")) if isinstance(state, dict) else None


# --- Orion leaves, the channel is deleted or archived ------------------------------------


async def erase_channel(store: ObjectStore, channel_id: str, *, why: str) -> int:
    """Everything Orion keeps for the channel (its home), and its place on the public
    list; how many objects went."""
    # What its admins chose is not Orion's memory of the channel: added back, Orion
    # answers there as they said.
    deleted = await erase_home(store, channel(channel_id), keep=(MODE,))
    await note_channel_visibility(store, channel_id, public=False)
    audit("erase", scope=channel_scope(channel_id), actor=SLACK, what=why, objects=deleted)
    return deleted


async def archive_channel(store: ObjectStore, channel_id: str, *, back: bool = False) -> int:
    """Move the channel's memory aside until the retention window ends (`back`: bring back
    what archiving set aside and has not expired since); how many files."""
    home = channel(channel_id)
    places = (home.memory_prefix, home.archived_prefix)
    moved = await _move(store, *(places[::-1] if back else places))
    scope = channel_scope(channel_id)
    audit("unarchive" if back else "archive", scope=scope, actor=SLACK, files=moved)
    return moved


async def _move(store: ObjectStore, source: str, destination: str) -> int:
    """Every object under `source` to the same name under `destination`: written there,
    then deleted here only if unchanged meanwhile."""
    listing = await store.list(source)

    async def move(listed: ObjectInfo) -> bool:
        stored = await store.read(listed.key)
        if stored is None:
            return False
        await store.write(destination + listed.key[len(source) :], stored.content)
        with contextlib.suppress(PreconditionFailed):
            await store.delete(listed.key, if_generation=stored.generation)
        return True

    return sum(await at_most(DELETE_CONCURRENCY, listing, move))


# --- after a channel turn -------------------------------------------------------------


async def after_channel_turn(
    store: ObjectStore,
    channel_id: str,
    thread_ts: str,
    *,
    public: bool,
    authors: set[str],
    since: datetime,
) -> bool:
    """The channel on the public list, and the thread noted in each author's home; False when an
    author was forgotten since the turn began (their words taken out, nothing more learned). Raises
    what storage raises."""
    await note_channel_visibility(store, channel_id, public=public)
    noted = await asyncio.gather(
        *(_note_said(store, a, channel_id, thread_ts, since) for a in sorted(authors))
    )
    return all(noted)


async def _note_said(
    store: ObjectStore, user_id: str, channel_id: str, thread_ts: str, since: datetime
) -> bool:
    home = person(user_id)
    guard = await Guard.reading(store, home, since=since)
    try:
        await note_channel_thread(guard.store, home, channel_id, thread_ts)
        await guard.settle()
    except Forgotten:
        # Forgotten since the turn began: their words there go too.
        room = channel(channel_id)
        if await forget_said(store, user_id, room, thread_ts):
            await reindex(store, room, {thread_ts})
        log.info("memory.channel.author_erased_during_turn")
        return False
    return True
