"""A channel's memory as its members and its admins control it: what Orion keeps for a
channel (`channels/{channel}/`, written through Claude's memory tool in that channel's
threads), who changed it, forgetting it, erasing it when Orion leaves, keeping it aside
while the channel is archived, and what admins chose for channels.

- **Who changed what** (`channel-records/{channel}/changes.json`): every change to the
  channel's memory — a file Claude wrote or deleted in a turn (attributed to the person
  whose mention it answered), a file a member forgot, everything forgotten — newest first,
  at most MAX_CHANGES. Only Orion writes it, nothing in it decides what Orion touches.
- **Forgetting** is any member's (the Slack room checks membership with Slack, never with
  what a request says): one file, or all of them.
- **Erasing** the whole channel — when Orion leaves it or it is deleted — leaves a
  tombstone first (`erasures/`, under a hash of the channel id), then deletes its memory,
  Orion's records of it and the records of its conversations (found by their markers);
  a turn still running checks the tombstone after its writes and erases again, as for a
  person (app/learning/erasure.py).
- **Archiving** moves the channel's memory under its records (`archived/`), which expire
  with the retention window like every conversation: kept until retention, reached by no
  conversation; unarchived in time, it comes back.
- **Admins choose** (`channel-settings/`): for the workspace and for each channel, `off`
  (Orion does not answer), `answers` (it answers and keeps nothing) or `memory` (it
  answers and remembers). A channel's choice wins over the workspace's; neither goes past
  what the deployment allows (`SLACK_CHANNELS`).
- **Since when the channel is as it is** (`channel-settings/{channel}.state.json`:
  `{"since": …, "event": …}`): Slack's time of the last event that changed it (Orion
  added or removed, the channel archived or unarchived), so that an older event
  delivered late, or again, undoes nothing newer (app/slack/channel_view/
  channel_lifecycle.py). One pair of functions reads and writes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from app.learning.channel_mode import ChannelMode
from app.learning.channel_recall import forget_public_channel
from app.learning.conversation_record import ConversationRecord
from app.learning.erasure import tombstone_time, write_tombstone
from app.learning.timestamps import format_time, parse_time
from app.memory.key_prefixes import CHANNEL_SETTINGS_PREFIX, ERASURES_PREFIX
from app.memory.scopes import (
    ChannelMemoryScope,
    archived_channel_prefix,
    channel_changes_key,
    channel_prefix,
    channel_records_prefix,
    channel_settings_key,
    conversation_record_key,
    is_user_id,
    thread_of_channel_marker_key,
    to_key,
    to_memory_path,
    validate_channel,
    workspace_channel_settings_key,
)
from app.memory.tolerant_json import load_json_object
from app.observability.audit import SLACK, Action, audit, channel_scope
from app.observability.logging import get_logger
from app.storage.store import ObjectStore, PreconditionFailed, update

log = get_logger(__name__)

MAX_CHANGES = 100
DELETE_CONCURRENCY = 16
# What one memory view shows at most (the channel's directory holds at most 200 files).
MAX_LISTED_FILES = 200


@dataclass(frozen=True)
class ModeChoice:
    mode: ChannelMode
    by: str  # the admin who chose it
    at: datetime

    def render(self) -> str:
        return json.dumps({"mode": self.mode.value, "by": self.by, "at": format_time(self.at)})

    @staticmethod
    def parse(raw: str | None) -> ModeChoice | None:
        data = load_json_object(raw, what="channel_settings")
        mode, by, at = data.get("mode"), data.get("by"), data.get("at")
        moment = parse_time(at) if isinstance(at, str) else None
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


async def read_choices(store: ObjectStore, channel_id: str) -> ChannelChoices:
    """The workspace's and the channel's choices, read at once. Raises what storage raises."""
    workspace, channel = await asyncio.gather(
        store.read(workspace_channel_settings_key()), store.read(channel_settings_key(channel_id))
    )
    return ChannelChoices(
        ModeChoice.parse(workspace.content if workspace else None),
        ModeChoice.parse(channel.content if channel else None),
    )


async def choose_mode(
    store: ObjectStore, mode: ChannelMode, *, channel_id: str | None, by: str
) -> ModeChoice:
    """An admin's choice for one channel (or, `channel_id` None, the workspace)."""
    choice = ModeChoice(mode, by, datetime.now(UTC))
    key = channel_settings_key(channel_id) if channel_id else workspace_channel_settings_key()
    await store.write(key, choice.render())
    scope = channel_scope(channel_id) if channel_id else "workspace"
    audit("setting", scope=scope, actor=by, what=f"channels {mode.value}")
    return choice


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
        at, by, action, what = (item.get(k) for k in ("at", "by", "action", "what"))
        moment = parse_time(at) if isinstance(at, str) else None
        if moment is None or not (is_user_id(by) or by == SLACK) or not isinstance(what, str):
            return None
        if action not in ("write", "delete", "forget", "erase", "archive", "unarchive"):
            return None
        return ChannelChange(moment, str(by), action, what[:300])


def parse_changes(raw: str | None) -> list[ChannelChange]:
    items = load_json_object(raw, what="channel_changes").get("changes")
    parsed = [ChannelChange.parse(item) for item in (items or [])[:MAX_CHANGES]]
    return [change for change in parsed if change is not None]


async def record_change(
    store: ObjectStore, channel_id: str, *, action: Action, what: str, by: str
) -> None:
    """Add one change to the channel's log (newest first, bounded), and audit it."""
    change = ChannelChange(datetime.now(UTC), by, action, what[:300])

    def added(raw: str | None) -> str:
        changes = [change, *parse_changes(raw)][:MAX_CHANGES]
        return json.dumps({"version": 1, "changes": [c.to_json() for c in changes]})

    await update(store, channel_changes_key(channel_id), added)


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
    root = channel_prefix(channel_id)
    listing, changes = await asyncio.gather(
        store.list(root), store.read(channel_changes_key(channel_id))
    )
    files = [
        ChannelFile(obj.key[len(root) :], obj.size, obj.updated)
        for obj in sorted(listing, key=lambda o: o.key)[:MAX_LISTED_FILES]
    ]
    return ChannelMemory(files, parse_changes(changes.content if changes else None))


def channel_file_key(channel_id: str, name: object) -> str | None:
    """The key of a file a member names (from a button's value: hostile until checked),
    if it is inside the channel's directory; else None."""
    if not isinstance(name, str) or not name or len(name) > 512:
        return None
    root = channel_prefix(channel_id)
    try:
        key = to_key(to_memory_path(root + name))
    except ValueError:
        return None
    return key if ChannelMemoryScope(channel_id).can_write(key) else None


async def forget_channel_file(store: ObjectStore, channel_id: str, name: str, *, by: str) -> bool:
    """One file of the channel's memory, forgotten by a member; whether it was there."""
    key = channel_file_key(channel_id, name)
    if key is None:
        raise ValueError("not a file of this channel's memory")
    forgotten = await store.delete(key)
    if forgotten:
        what = to_memory_path(key)
        audit("forget", scope=channel_scope(channel_id), actor=by, what=what)
        await record_change(store, channel_id, action="forget", what=what, by=by)
    return forgotten


async def forget_channel_memory(store: ObjectStore, channel_id: str, *, by: str) -> int:
    """Every file of the channel's memory, forgotten by a member; how many went."""
    listing = await store.list(channel_prefix(channel_id))
    deleted = await _delete_all(store, [obj.key for obj in listing])
    audit("forget", scope=channel_scope(channel_id), actor=by, what="everything", files=deleted)
    await record_change(store, channel_id, action="forget", what="everything", by=by)
    return deleted


# --- since when the channel is as it is ---------------------------------------------------


def _state_key(channel_id: str) -> str:
    # Beside the admins' choices: kept when the channel's memory and records are erased,
    # so that a late event from before an erasure still finds it.
    return f"{CHANNEL_SETTINGS_PREFIX}{validate_channel(channel_id)}.state.json"


async def channel_state_since(store: ObjectStore, channel_id: str) -> datetime | None:
    """When the channel came to be as Orion last heard (added, removed, archived,
    unarchived: Slack's time of that event); None when Orion never heard. Raises what
    storage raises."""
    stored = await store.read(_state_key(channel_id))
    return _since(stored.content if stored else None)


async def note_channel_state_since(
    store: ObjectStore, channel_id: str, moment: datetime, *, event: str
) -> None:
    """The channel is as `event` (Slack's event type) left it since `moment`; a later
    time already noted stays."""

    def later(raw: str | None) -> str | None:
        noted = _since(raw)
        if noted is not None and noted >= moment:
            return raw
        return json.dumps({"since": moment.astimezone(UTC).isoformat(), "event": event[:40]})

    await update(store, _state_key(channel_id), later)


def _since(raw: str | None) -> datetime | None:
    since = load_json_object(raw, what="channel_state").get("since")
    try:
        moment = datetime.fromisoformat(since) if isinstance(since, str) else None
    except ValueError:
        return None
    return moment if moment is not None and moment.tzinfo is not None else None


# --- Orion leaves, the channel is deleted or archived ------------------------------------


def channel_tombstone_key(channel_id: str) -> str:
    digest = hashlib.sha256(f"orion-channel-erasure:{channel_id}".encode()).hexdigest()[:32]
    return f"{ERASURES_PREFIX}{digest}"


async def channel_erasure_time(store: ObjectStore, channel_id: str) -> datetime | None:
    return await tombstone_time(store, channel_tombstone_key(channel_id))


async def erase_channel(
    store: ObjectStore, channel_id: str, *, why: str, now: datetime | None = None
) -> int:
    """Everything Orion keeps for the channel: its memory, its records and the records of
    its conversations (each only if it names this channel); a tombstone first. How many
    objects went."""
    await write_tombstone(store, channel_tombstone_key(channel_id), now or datetime.now(UTC))
    deleted = await _erase(store, channel_id)
    audit("erase", scope=channel_scope(channel_id), actor=SLACK, what=why, objects=deleted)
    return deleted


async def erase_again_if_erased(store: ObjectStore, channel_id: str, since: datetime) -> bool:
    """After a turn's writes in the channel: if the channel was erased meanwhile (Orion
    removed, the channel deleted), what the turn wrote goes too."""
    erased_at = await channel_erasure_time(store, channel_id)
    if erased_at is None or erased_at < since:
        return False
    await _erase(store, channel_id)
    log.info("memory.channel.erased_during_turn")
    return True


async def _erase(store: ObjectStore, channel_id: str) -> int:
    memory, records = await asyncio.gather(
        store.list(channel_prefix(channel_id)), store.list(channel_records_prefix(channel_id))
    )
    threads = sorted(
        ts for obj in records if (ts := thread_of_channel_marker_key(channel_id, obj.key))
    )
    conversations = await _conversations_of(store, channel_id, threads)
    deleted = await _delete_all(store, [obj.key for obj in memory] + conversations)
    await forget_public_channel(store, channel_id)
    # Last: the markers are what finds the rest, should this erasure be cut short.
    return deleted + await _delete_all(store, [obj.key for obj in records])


async def _conversations_of(store: ObjectStore, channel_id: str, threads: list[str]) -> list[str]:
    """The record keys of the threads whose record names this channel (a marker alone
    proves nothing: the record says whose the thread is)."""
    limit = asyncio.Semaphore(DELETE_CONCURRENCY)

    async def ours(thread_ts: str) -> str | None:
        key = conversation_record_key(thread_ts)
        async with limit:
            stored = await store.read(key)
        record = ConversationRecord.parse(stored.content) if stored is not None else None
        if record is None or not record.owner.in_channel or record.owner.channel != channel_id:
            return None
        return key

    found = await asyncio.gather(*(ours(ts) for ts in threads))
    return [key for key in found if key is not None]


async def archive_channel(store: ObjectStore, channel_id: str) -> int:
    """Move the channel's memory aside until the retention window ends; how many files."""
    moved = await _move(store, channel_prefix(channel_id), archived_channel_prefix(channel_id))
    audit("archive", scope=channel_scope(channel_id), actor=SLACK, files=moved)
    return moved


async def unarchive_channel(store: ObjectStore, channel_id: str) -> int:
    """Bring back what archiving set aside (what has not expired since)."""
    moved = await _move(store, archived_channel_prefix(channel_id), channel_prefix(channel_id))
    audit("unarchive", scope=channel_scope(channel_id), actor=SLACK, files=moved)
    return moved


async def _move(store: ObjectStore, source: str, destination: str) -> int:
    """Every object under `source` to the same name under `destination`: written there,
    then deleted here only if unchanged meanwhile."""
    listing = await store.list(source)
    limit = asyncio.Semaphore(DELETE_CONCURRENCY)

    async def move(key: str) -> bool:
        async with limit:
            stored = await store.read(key)
            if stored is None:
                return False
            await store.write(destination + key[len(source) :], stored.content)
            with contextlib.suppress(PreconditionFailed):
                await store.delete(key, if_generation=stored.generation)
            return True

    return sum(await asyncio.gather(*(move(obj.key) for obj in listing)))


async def _delete_all(store: ObjectStore, keys: Sequence[str]) -> int:
    limit = asyncio.Semaphore(DELETE_CONCURRENCY)

    async def delete(key: str) -> bool:
        async with limit:
            return await store.delete(key)

    return sum(await asyncio.gather(*(delete(key) for key in keys)))
