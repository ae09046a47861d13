"""Moving what Orion wrote up to 2026-11-28 into its owners' homes, by `orion migrate` and every
start, safe to rerun beside a running Orion (docs/architecture.md, "Upgrades keep data")."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial

from app.learning.conversation_record import ConversationOwner, ConversationRecord, thread_context
from app.learning.conversations import forget_said
from app.learning.erasure import delete_all, index_record, reindex, said_since_erasure
from app.learning.guard import Forgotten, Guard
from app.learning.person_settings import note_channel_thread
from app.learning.profile import ConversationEntry, Profile
from app.learning.search_index import parse_search_index
from app.learning.summary_file import UNTITLED, Summary
from app.learning.timestamps import format_time, parse_moment, parse_time
from app.learning.welcome import SECTION as WELCOME
from app.memory.homes import Home, channel, person, thread_of_name, workspace_channels_key
from app.memory.key_prefixes import CHANNELS, DEPLOYMENT, LEGACY_PREFIXES, PEOPLE
from app.memory.scopes import is_shared_channel_id, is_user_id
from app.memory.team_keys import team_scoped
from app.memory.tolerant_json import Unreadable, load_json_list, load_json_object
from app.observability.logging import get_logger
from app.storage.store import (
    CREATE_ONLY,
    ObjectInfo,
    ObjectStore,
    ObjectTooLarge,
    PreconditionFailed,
    StoredObject,
    Transform,
    update,
)
from app.storage.team_scope import NO_ID, TENANTS_SEGMENT, Tenant, bound_tenant

log = get_logger(__name__)

CONCURRENCY = 8
# Created (once) by the first start of an Orion that keeps homes: anything directly in
# `channels/{C}/` older than it is a channel's memory as the old layout kept it, named
# like Orion's records or not (Claude could write `/memories/channels/C/profile.json`).
LAYOUT_MARKER = f"{DEPLOYMENT.prefix}layout.json"
# What a home holds in the new layout: anything else directly in `channels/{C}/` is a
# channel's memory as the old layout kept it.
_HOME_NAMES = ("profile.json", "memory/", "conversations/", "search.json", "undo/", "archived/")
# What the old layout kept in `people/{U}/` (search.json has not moved).
_OLD_PEOPLE = ("conversations.json", "welcome.json", "threads/", "said/", "undo/")


@dataclass
class UpgradeReport:
    """What a run moved, by kind, and what it could not read."""

    moved: Counter[str] = field(default_factory=Counter)
    deleted: int = 0
    unreadable: int = 0

    @property
    def found(self) -> bool:
        return bool(self.deleted or self.unreadable or self.moved)


async def upgrade(store: ObjectStore) -> UpgradeReport:
    """Move everything of the old layout in `store` (beneath any workspace's scope) home."""
    report = UpgradeReport()
    listings = await asyncio.gather(*(store.list(prefix) for prefix in LEGACY_PREFIXES))
    old = [obj.key for listing in listings for obj in listing]
    if not old:
        return report  # nothing of the old layout (the homes need not be listed)
    marked = await _layout_marked(store)
    homes = await asyncio.gather(store.list(PEOPLE.prefix), store.list(CHANNELS.prefix))
    old += [obj.key for listing in homes for obj in listing if _is_old_home_key(obj, marked)]
    by_tenant: dict[str, set[str]] = defaultdict(set)
    for key in old:
        segment, unscoped = _split(key)
        by_tenant[segment].add(unscoped)
    for segment, keys in sorted(by_tenant.items()):
        if not segment:
            await _Tenant(store, keys, report).run()
            continue
        # In distribution mode, one workspace's keys as its events reach them.
        enterprise, team = (None if i == NO_ID else i for i in segment.split("/")[1:3])
        with bound_tenant(Tenant(enterprise, team)):
            await _Tenant(team_scoped(store), keys, report).run()
    return report


def _split(key: str) -> tuple[str, str]:
    """A key's workspace segment (`teams/E/T/`, or "") and the key without it."""
    kind, _, rest = key.partition("/")
    parts = rest.split("/")
    if len(parts) > 3 and parts[0] == TENANTS_SEGMENT:
        return "/".join(parts[:3]) + "/", f"{kind}/{'/'.join(parts[3:])}"
    return "", key


async def mark_layout(store: ObjectStore, since: datetime | None = None) -> None:
    """Mark the bucket as the new layout's, once, before anything is kept, so a rollback's old
    objects are never taken for homes; `since`: when the marking process started (it may have kept
    homes first)."""
    # To the microsecond: a second's truncation would date the mark before objects of the
    # old layout written in that second, and they would pass for the new layout's.
    mark = json.dumps({"layout": "homes", **({"since": since.isoformat()} if since else {})})
    with contextlib.suppress(PreconditionFailed):
        await store.write(LAYOUT_MARKER, mark, if_generation=CREATE_ONLY)


async def _layout_marked(store: ObjectStore) -> datetime:
    """When the bucket was first marked (storage's clock), or its marker's process
    started if earlier: marked now, if not before."""
    await mark_layout(store)
    marker = await store.read(LAYOUT_MARKER)
    if marker is None:
        return datetime.now(UTC)
    since = parse_moment(load_json_object(marker.content, what="layout").get("since"))
    return min(marker.updated, since or marker.updated)


def _is_old_home_key(obj: ObjectInfo, marked: datetime) -> bool:
    _, unscoped = _split(obj.key)
    kind, _, rest = unscoped.partition("/")
    owner, _, inside = rest.partition("/")
    if kind == "people":
        new_undo = inside.startswith("undo/") and inside.endswith(".json")
        return is_user_id(owner) and inside.startswith(_OLD_PEOPLE) and not new_undo
    old = obj.updated < marked or not inside.startswith(_HOME_NAMES)
    return is_shared_channel_id(owner) and bool(inside) and old


class _Tenant:
    """One workspace's old objects (all of them, in one-workspace mode), moved home."""

    def __init__(self, store: ObjectStore, keys: set[str], report: UpgradeReport) -> None:
        self._store = store
        self._keys = keys
        self._report = report
        self._done: set[str] = set()  # old keys whose content is home: deleted at the end
        # Old erasure marks of owners not moved, and objects too large to read: for a rerun.
        self._left: set[str] = set()
        self._limit = asyncio.Semaphore(CONCURRENCY)

    async def _read(self, key: str) -> StoredObject | None:
        """None also for an object too large to read: left and counted, or no rerun
        would ever get past it."""
        async with self._limit:
            try:
                return await self._store.read(key)
            except ObjectTooLarge as exc:
                self._unreadable(key, exc)
                self._left.add(key)
                return None

    async def _read_old(self, key: str | None) -> StoredObject | None:
        """An object of the old layout (None: not among this run's, or gone since)."""
        return await self._read(key) if key in self._keys else None

    async def _update(self, key: str, change: Transform, store: ObjectStore) -> None:
        async with self._limit:
            await update(store, key, change)

    async def _profile_as_kept(
        self, home: Home, erasure_seed: str
    ) -> tuple[Guard, datetime | None] | None:
        """The erasure guard the owner's move writes through, from their profile with the old
        erasure mark written in, and that mark's time; None when the profile cannot be read (the old
        mark stays)."""
        erased_at = await self._erasure(erasure_seed)

        def marked(current: str | None) -> str | None:
            profile = Profile.to_update(current)
            if erased_at is None or (profile.erased_at or erased_at) > erased_at:
                return current
            return replace(profile, erased_at=erased_at).render()

        if erased_at is not None:
            with contextlib.suppress(Unreadable):  # the guard below says so
                await self._update(home.profile_key, marked, self._store)
        guard = Guard(self._store, home, await self._read(home.profile_key))
        if not guard.readable:
            self._unreadable(home.profile_key)
            self._left.add(_erasure_key(erasure_seed))
            return None
        return guard, erased_at

    def _unreadable(self, key: str, exc: BaseException | None = None) -> None:
        log.warning("memory.upgrade.unreadable", key=key, exc_info=exc)
        self._report.unreadable += 1
        self._done.discard(key)

    async def run(self) -> None:
        records = await self._conversations()
        # Whose each old key is: its second segment (`settings/U1.json`: U1).
        owners = {(k.split("/")[0], k.split("/")[1].removesuffix(".json")) for k in self._keys}
        people = {o for kind, o in owners if kind in ("users", "people", "settings")}
        people |= {r.owner.user for r in records.values() if not r.owner.in_channel}
        people = {p for p in people if is_user_id(p)}
        channels = {o for kind, o in owners if kind.startswith("channel")}
        channels |= {r.owner.channel for r in records.values() if r.owner.in_channel}
        channels = {c for c in channels if is_shared_channel_id(c)}
        said = await self._said_in(records)
        await asyncio.gather(
            *(self._person(u, records, said.get(u, set())) for u in sorted(people))
        )
        await asyncio.gather(*(self._channel(c, records) for c in sorted(channels)))
        await self._workspace()
        # Whatever else the old layout held (thread contexts of records gone, erasure marks,
        # markers, undo records) is not moved: it goes with the rest.
        self._done |= {
            k
            for k in self._keys
            if k.startswith(("threads/", "erasures/", "undo/"))
            or (k.startswith("people/") and not k.endswith(("conversations.json", "welcome.json")))
            or (k.startswith("channel-records/") and "/conversations/" in k)
        }
        self._done -= self._left
        leftovers = self._keys - self._done
        # What leads to the rest goes after it (a person's list to summaries older than
        # records; the records to theirs, and they are what finds the lists): a run cut
        # short leaves the next one its way to what is left.
        kept_last = {k for k in self._done if k.startswith("conversations/")}
        lists = {k for k in self._done if k.endswith("/conversations.json")}
        for keys in (self._done - kept_last - lists, lists - kept_last, kept_last):
            self._report.deleted += await delete_all(self._store, sorted(keys))
        if leftovers:
            log.info("memory.upgrade.left", objects=len(leftovers))

    # -- conversations ---------------------------------------------------------------

    async def _conversations(self) -> dict[str, ConversationRecord]:
        """Every old conversation record, by thread, with its summary and Slack context."""
        keys = sorted(
            k for k in self._keys if k.startswith("conversations/") and k.endswith(".json")
        )
        stored = await asyncio.gather(*(self._read(k) for k in keys))
        records: dict[str, ConversationRecord] = {}
        for key, obj in zip(keys, stored, strict=True):
            record = ConversationRecord.parse(obj.content) if obj is not None else None
            if record is None:
                if obj is not None:
                    self._unreadable(key)
                continue
            records[record.thread_ts] = record
            self._done.add(key)
        completed = await asyncio.gather(*(self._complete(r) for r in records.values()))
        return {r.thread_ts: r for r in completed}

    async def _complete(self, record: ConversationRecord) -> ConversationRecord:
        """The record with the summary and context the old layout kept beside it."""
        name = record.thread_ts.replace(".", "-")
        owner = record.owner
        summary_key = (
            f"channel-records/{owner.channel}/threads/{name}.md"
            if owner.in_channel
            else f"sessions/{name}/context.md"
        )
        context_key = None if owner.in_channel else f"threads/{owner.channel}/{name}.json"
        summary_obj, context_obj = await asyncio.gather(
            self._read_old(summary_key), self._read_old(context_key)
        )
        completed = record
        if summary_obj is not None:
            completed = completed.with_summary(_markdown_summary(summary_obj))
            self._done.add(summary_key)
        if context_obj is not None and context_key is not None:
            context = thread_context(load_json_object(context_obj.content, what="thread_context"))
            if context:
                completed = completed.with_context(context)
            self._done.add(context_key)
        return completed

    async def _write_conversation(self, guard: Guard, record: ConversationRecord) -> None:
        """The conversation home, merged with what is there already."""

        def merged(current: str | None) -> str:
            kept = ConversationRecord.parse(current) if current is not None else None
            if kept is None:
                return record.render()
            both = record.with_messages(kept.messages).with_summary(kept.summary)
            if kept.context:
                both = both.with_context(kept.context)
            return both.render()

        await self._update(guard.home.conversation_key(record.thread_ts), merged, guard.store)
        self._report.moved["conversations"] += 1

    async def _said_in(
        self, records: dict[str, ConversationRecord]
    ) -> dict[str, set[tuple[str, str]]]:
        said: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for key in self._keys:
            parts = key.split("/")
            if len(parts) == 4 and parts[0] == "people" and parts[2] == "said":
                thread = thread_of_name(parts[3])
                record = records.get(thread) if thread else None
                if record is not None and record.owner.in_channel:
                    said[parts[1]].add((record.owner.channel, record.thread_ts))
        return said

    # -- a person --------------------------------------------------------------------

    async def _person(
        self, user: str, records: dict[str, ConversationRecord], said: set[tuple[str, str]]
    ) -> None:
        home = person(user)
        own = {t: r for t, r in records.items() if not r.owner.in_channel and r.owner.user == user}
        index_key, welcome_key = f"people/{user}/conversations.json", f"people/{user}/welcome.json"
        settings_key = f"settings/{user}.json"
        kept = await self._profile_as_kept(home, f"orion-erasure:{user}")
        if kept is None:
            return
        guard, old_erasure = kept
        self._done |= {index_key, welcome_key, settings_key} & self._keys  # whatever comes next
        # Forgotten in the new layout before this run, or while it moves them: what the old
        # one kept of them goes, never home (an upgrade must not bring back what they erased).
        theirs = (f"users/{user}/", *_notes_of(own))
        if guard.profile.erased_at not in (None, old_erasure):
            self._forgotten(theirs)
            return
        index, welcome, settings = await asyncio.gather(
            self._read_old(index_key), self._read_old(welcome_key), self._read_old(settings_key)
        )
        # A conversation they forgot on the new Orion stays forgotten: its old part goes.
        forgot = guard.profile.forgotten
        self._done |= {k for k in self._keys if k.startswith(_notes_of(forgot))}
        own = {t: r for t, r in own.items() if t not in forgot}
        entries = [
            e
            for item in load_json_list(index.content if index else None, what="conversations_index")
            if (e := ConversationEntry.parse(item)) is not None and e.thread_ts not in forgot
        ]
        old_welcome = load_json_object(welcome.content if welcome else None, what="welcome")
        # A conversation from before records were kept: its summary is all there is.
        for entry in entries:
            name = entry.thread_ts.replace(".", "-")
            if entry.thread_ts in own or f"sessions/{name}/context.md" not in self._keys:
                continue
            if entry.channel is None or not entry.channel.startswith("D"):
                continue
            stored = await self._read(f"sessions/{name}/context.md")
            if stored is None:
                continue
            record = ConversationRecord(
                entry.thread_ts, ConversationOwner(user, entry.channel), entry.updated
            ).with_summary(_markdown_summary(stored))
            own[entry.thread_ts] = record
            self._done.add(f"sessions/{name}/context.md")
        store = guard.store
        await asyncio.gather(*(self._write_conversation(guard, r) for r in own.values()))
        await asyncio.gather(
            *(
                self._move(f"sessions/{t.replace('.', '-')}/", home.notes_prefix(t), store)
                for t in own
            )
        )
        await self._move(f"users/{user}/", home.memory_prefix, store)
        # Their own object now, where a newer choice wins; the channel threads noted.
        old = settings.content if settings is not None else None
        if old is not None:
            await self._update(home.settings_key, lambda c: c or old, store)
        for channel_id, thread_ts in sorted(said):
            async with self._limit:
                await note_channel_thread(store, home, channel_id, thread_ts)
        await self._index(guard, list(own.values()))
        try:
            await self._profile(
                guard,
                own.values(),
                entries=entries,
                welcome=None if old_welcome.get("thread") in forgot else old_welcome,
            )
        except Forgotten:  # what the move wrote is taken back
            self._forgotten(theirs)
            return
        self._report.moved["people"] += 1

    def _forgotten(self, theirs: tuple[str, ...]) -> None:
        self._done |= {k for k in self._keys if k.startswith(theirs)}
        self._report.moved["forgotten, not moved"] += 1

    async def _erasure(self, seed: str) -> datetime | None:
        """When the old layout's erasure mark for this owner says they were forgotten."""
        key = _erasure_key(seed)
        stored = await self._read_old(key)
        if stored is not None:
            mark = load_json_object(stored.content, what="tombstone")
            if (erased_at := parse_moment(mark.get("erased_at"))) is not None:
                return erased_at
        elif key not in self._left:  # none (one too large to read is left)
            return None
        # Only an erasure writes one: unreadable, its own time is when it was asked for.
        log.warning("memory.upgrade.unreadable_erasure", key=key)
        if stored is not None:
            return stored.updated
        return next((o.updated for o in await self._store.list(key) if o.key == key), None)

    async def _profile(
        self,
        guard: Guard,
        records: Iterable[ConversationRecord],
        *,
        entries: Sequence[ConversationEntry] = (),
        welcome: dict[str, object] | None = None,
        sections: dict[str, object] | None = None,
    ) -> None:
        """The owner's profile, with what the old layout knew of them merged in (what the
        profile already says wins). Raises `Forgotten` when they were forgotten since the
        move began: what it wrote in their home is taken back."""
        listed = {e.thread_ts: e for e in entries}
        for record in records:
            if record.thread_ts not in listed:
                listed[record.thread_ts] = record.listed_as()
        old_welcome = _welcome_section(welcome)

        def merged(profile: Profile) -> Profile:
            for entry in listed.values():
                if profile.entry(entry.thread_ts) is None:
                    profile = profile.with_conversation(entry)
            if old_welcome is not None and profile.section(WELCOME) is None:
                profile = profile.with_section(WELCOME, old_welcome)
            for name, value in (sections or {}).items():
                if profile.section(name) is None:
                    profile = profile.with_section(name, value)
            return profile

        async with self._limit:
            await guard.settle(merged)

    async def _index(self, guard: Guard, records: Iterable[ConversationRecord]) -> None:
        """The owner's search index (where it always was, or moved), with an entry for
        each moved conversation it lacks."""
        stored = await self._read(guard.home.search_key)
        index = parse_search_index(stored.content if stored else None)
        for record in records:
            if record.thread_ts not in index.threads:
                async with self._limit:
                    await index_record(guard.store, guard.home, record)

    # -- a channel -------------------------------------------------------------------

    async def _channel(self, channel_id: str, records: dict[str, ConversationRecord]) -> None:
        home = channel(channel_id)
        kept = await self._profile_as_kept(home, f"orion-channel-erasure:{channel_id}")
        if kept is None:
            return
        guard, old_erasure = kept
        store = guard.store
        # Erased on the new Orion before this run (Orion removed from it): nothing of the
        # old layout comes back but what its admins chose, which an erasure keeps.
        erased = guard.profile.erased_at not in (None, old_erasure)
        found = [] if erased else [r for r in records.values() if r.owner.channel == channel_id]
        found = [r for r in found if r.owner.in_channel]
        own = {r.thread_ts: r for r in await asyncio.gather(*map(self._without_forgotten, found))}
        if erased:
            self._done |= {k for k in self._keys if k.startswith(f"channel-records/{channel_id}/")}
        else:
            # First, and each deleted at once: its names may be those of the records below.
            await self._move(f"channels/{channel_id}/", home.memory_prefix, store, now=True)
            await asyncio.gather(*(self._write_conversation(guard, r) for r in own.values()))
            await self._move(f"channel-records/{channel_id}/archived/", home.archived_prefix, store)
            await self._move(f"channel-records/{channel_id}/search.json", home.search_key, store)
        changes_key = f"channel-records/{channel_id}/changes.json"
        mode_key = f"channel-settings/{channel_id}.json"
        changes, mode = await asyncio.gather(self._read_old(changes_key), self._read_old(mode_key))
        sections: dict[str, object] = {}
        if changes is not None:
            items = load_json_object(changes.content, what="channel_changes").get("changes")
            if isinstance(items, list) and not erased:
                sections["changes"] = items
            self._done.add(changes_key)
        if mode is not None:
            sections["mode"] = load_json_object(mode.content, what="channel_settings")
            self._done.add(mode_key)
        await self._index(guard, list(own.values()))
        # A member who forgot everything while all this was written: their words go again.
        for record in await asyncio.gather(*map(self._without_forgotten, own.values())):
            for author in sorted(own[record.thread_ts].authors - record.authors):
                await forget_said(store, author, home, record.thread_ts)
            own[record.thread_ts] = record
        # The old index still holds the words of members forgotten since: made anew.
        if changed := [r.thread_ts for r in found if own[r.thread_ts] != r]:
            await reindex(store, home, changed)
        with contextlib.suppress(Forgotten):  # what the move wrote is taken back
            await self._profile(guard, own.values(), sections=sections)
            self._report.moved["channels"] += 1

    async def _without_forgotten(self, record: ConversationRecord) -> ConversationRecord:
        """A channel's conversation without the words, nor the id, of members forgotten on
        the new layout before it moved: their Forget everything could not reach it."""
        kept = {m.user for m in await said_since_erasure(self._store, record.messages)}
        for author in sorted(record.authors - kept):
            record = record.without_author(author)
        return record

    async def _move(self, old: str, new: str, store: ObjectStore, *, now: bool = False) -> None:
        """Every old file under `old` to the same name under `new`: a file already there
        stays (it is newer), but a person's preferences merge (what is there wins, key by
        key). `now`: each old one deleted at once, else with the rest at the end."""
        summary = f"{old}context.md" if old.startswith("sessions/") else None  # a record's
        keys = [k for k in self._keys if k.startswith(old) and k != summary]

        async def move(key: str) -> None:
            stored = await self._read(key)
            if stored is None:
                return
            name = key[len(old) :]
            merge = old.startswith("users/") and name == "preferences.json"
            await self._update(new + name, partial(_placed, stored.content, merge=merge), store)
            if now:
                with contextlib.suppress(PreconditionFailed):
                    await self._store.delete(key, if_generation=stored.generation)
                    self._report.deleted += 1
            else:
                self._done.add(key)
            self._report.moved["files"] += 1

        await asyncio.gather(*(move(k) for k in keys))

    async def _workspace(self) -> None:
        """What admins chose for every channel, and the public channels, as one object."""
        mode_key, public_key = "channel-settings/workspace.json", "channel-records/public.json"
        mode, public = await asyncio.gather(self._read_old(mode_key), self._read_old(public_key))
        if mode is None and public is None:
            return
        old_mode = load_json_object(mode.content if mode else None, what="channel_settings")
        old_public = load_json_object(public.content if public else None, what="public_channels")

        def merged(current: str | None) -> str:
            data = load_json_object(current, what="workspace")
            if old_mode and "mode" not in data:
                data["mode"] = old_mode
            if isinstance(old_public.get("channels"), list):
                listed = {
                    item[0]: item
                    for item in data.get("public") or []
                    if isinstance(item, list) and item
                }
                for item in old_public["channels"]:
                    if isinstance(item, list) and item and item[0] not in listed:
                        listed[item[0]] = item
                data["public"] = list(listed.values())
            return json.dumps(data)

        await self._update(workspace_channels_key(), merged, self._store)
        self._done |= {k for k in (mode_key, public_key) if k in self._keys}


def _markdown_summary(stored: StoredObject) -> Summary:
    """A summary as the old layout wrote it: `# title`, `Last updated: …`, `User: …`, body."""
    lines = stored.content.strip().splitlines()
    title = UNTITLED
    if lines and lines[0].startswith("#"):
        title = lines.pop(0).lstrip("#").strip() or UNTITLED
    updated: datetime | None = None
    while lines and (not lines[0].strip() or lines[0].startswith(("Last updated: ", "User: "))):
        line = lines.pop(0)
        if line.startswith("Last updated: "):
            updated = parse_time(line.removeprefix("Last updated: "))
    return Summary(title, "\n".join(lines).strip(), updated or stored.updated)


def _welcome_section(welcome: dict[str, object] | None) -> dict[str, object] | None:
    if not welcome or not isinstance(welcome.get("thread"), str):
        return None
    section = {
        k: v for k, v in welcome.items() if k in ("thread", "topic", "greeting", "next_step")
    }
    if (updated := parse_moment(welcome.get("updated"))) is not None:
        section["updated"] = format_time(updated)
    return section


def _placed(old: str, current: str | None, merge: bool) -> str:
    if current is None:
        return old
    if not merge:
        return current
    older = load_json_object(old, what="preferences")
    newer = load_json_object(current, what="preferences")
    learned = {**_dict(older.get("_learned")), **_dict(newer.get("_learned"))}
    both = {**older, **newer}
    if learned:
        both["_learned"] = learned
    return json.dumps(both, ensure_ascii=False)


def _dict(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _notes_of(threads: Iterable[str]) -> tuple[str, ...]:
    """Where the old layout kept these conversations' notes and summaries."""
    return tuple(f"sessions/{t.replace('.', '-')}/" for t in threads)


def _erasure_key(seed: str) -> str:
    """Where the old layout kept an owner's erasure mark."""
    return f"erasures/{hashlib.sha256(seed.encode()).hexdigest()[:32]}"
