"""Forgetting one thing (every copy of it) or everything Orion keeps about an owner, the erasure's
mark made first (docs/memory-controls.md, "What Forget covers" and "What erasure covers")."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from app.learning.conversation_record import ConversationRecord, TranscriptMessage
from app.learning.conversations import forget_said, read_conversation
from app.learning.guard import Forgotten, Guard
from app.learning.person_settings import channel_threads
from app.learning.preferences import without_preference
from app.learning.profile import Profile
from app.learning.search_index import (
    WRITE_ATTEMPTS,
    SearchDocument,
    document_for,
    record_search_document,
    remove_documents,
    with_documents,
    without_threads,
)
from app.learning.welcome import without_welcome
from app.memory.homes import Home, channel, person, preferences_key
from app.memory.retention import cutoff_of
from app.memory.scopes import to_key
from app.memory.tolerant_json import Unreadable, load_json_object
from app.memory.tool.model_paths import person_memory_key
from app.observability.logging import get_logger
from app.storage.store import (
    ObjectInfo,
    ObjectStore,
    ObjectTooLarge,
    PreconditionFailed,
    StoredObject,
    at_most,
    update,
)

log = get_logger(__name__)

DELETE_CONCURRENCY = 16
CHANNEL_CONCURRENCY = 4  # channels at once, each with its threads at DELETE_CONCURRENCY


@dataclass
class ErasureReport:
    """What an erasure removed, by kind (never what it said)."""

    deleted: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.deleted.values())


async def erase_home(store: ObjectStore, home: Home, *, keep: tuple[str, ...] = ()) -> int:
    """Everything of one owner: the profile made the erasure's mark (keeping only the sections named
    in `keep`), then every other object of the home deleted; how many objects went."""
    await _mark(store, home, datetime.now(UTC), keep)
    listing = await store.list(home.prefix)
    return await delete_all(store, [obj.key for obj in listing if obj.key != home.profile_key])


async def _mark(store: ObjectStore, home: Home, moment: datetime, keep: tuple[str, ...]) -> None:
    def mark(current: str | None) -> str:
        before = Profile.parse(current)
        marked = Profile(erased_at=moment)
        for name in keep:
            marked = marked.with_section(name, before.section(name))
        return marked.render()

    try:
        await update(store, home.profile_key, mark)
    except ObjectTooLarge as exc:  # none Orion writes is: the mark goes over it, keeping nothing
        log.warning("memory.erasure.too_large", key=home.profile_key, exc_info=exc)
        await store.write(home.profile_key, mark(None))


async def forget_everything(
    store: ObjectStore, user_id: str, *, now: datetime | None = None
) -> ErasureReport:
    """Every object of the person's, and their words in channel threads."""
    home = person(user_id)
    await _mark(store, home, now or datetime.now(UTC), ())
    # Listed after the mark: a thread noted since is its writer's to take back (its guard).
    listing, settings = await asyncio.gather(store.list(home.prefix), _settings(store, home))
    keys = [obj.key for obj in listing]
    threads = channel_threads(home, keys, settings)
    report = ErasureReport()
    if threads:
        report.deleted["channel_threads"] = await _forget_said_in(store, user_id, sorted(threads))
    # The home last: an erasure cut short and asked again still finds the threads.
    report.deleted["home"] = await delete_all(store, [k for k in keys if k != home.profile_key])
    return report


async def _settings(store: ObjectStore, home: Home) -> str | None:
    """The person's settings, for the channel threads they list; None when there are none,
    or too large to read (none Orion writes is; the threads noted since still list)."""
    try:
        stored = await store.read(home.settings_key)
    except ObjectTooLarge as exc:
        log.warning("memory.erasure.too_large", key=home.settings_key, exc_info=exc)
        return None
    return stored.content if stored is not None else None


async def _forget_said_in(
    store: ObjectStore, user_id: str, threads: Sequence[tuple[str, str]]
) -> int:
    """What the person wrote in channel threads, out of each transcript and its search
    entry; in how many threads there was some."""
    by_channel: dict[str, set[str]] = defaultdict(set)
    for channel_id, thread_ts in threads:
        by_channel[channel_id].add(thread_ts)

    async def forget(channel_id: str) -> int:
        home, theirs = channel(channel_id), by_channel[channel_id]
        # Entries out first (no search shows a thread as it was while it changes), then made
        # anew; one write of the channel's index each way (one a thread would race the rest).
        await remove_documents(store, home, theirs)
        removed = await at_most(
            DELETE_CONCURRENCY, sorted(theirs), lambda t: forget_said(store, user_id, home, t)
        )
        await reindex(store, home, theirs)
        return sum(removed)

    return sum(await at_most(CHANNEL_CONCURRENCY, sorted(by_channel), forget))


async def said_since_erasure(
    store: ObjectStore, messages: Sequence[TranscriptMessage]
) -> list[TranscriptMessage]:
    """The messages of a channel's thread (read from Slack) that may be kept: none that their author
    wrote before they last asked to be forgotten (none at all of an author whose profile cannot be
    read). One profile read per author, at once. Raises what storage raises."""
    authors = sorted({m.user for m in messages if m.user is not None})
    profiles = await asyncio.gather(*(store.read(person(a).profile_key) for a in authors))
    erased = {author: _erased_at(stored) for author, stored in zip(authors, profiles, strict=True)}
    return [
        m for m in messages if m.user is None or (at := erased.get(m.user)) is None or m.at > at
    ]


def _erased_at(stored: StoredObject | None) -> datetime | None:
    try:
        return Profile.to_update(stored.content if stored else None).erased_at
    except Unreadable:  # it may say they were forgotten: none of their words are kept
        return datetime.max.replace(tzinfo=UTC)


async def reindex(store: ObjectStore, home: Home, threads: Collection[str]) -> None:
    """The conversations' search entries made again from what their objects now hold, in
    one write of the owner's index."""
    records = await at_most(
        DELETE_CONCURRENCY, sorted(threads), lambda t: read_conversation(store, home, t)
    )
    found = [r for r in records if r is not None]
    documents = await asyncio.to_thread(lambda: [_document(r) for r in found])
    gone = set(threads) - {document.thread_ts for document in documents}
    cutoff = cutoff_of(store)

    def rewritten(raw: str | None) -> str | None:
        kept = without_threads(raw, gone)
        return with_documents(kept, documents, cutoff=cutoff) if documents else kept

    await update(store, home.search_key, rewritten, attempts=WRITE_ATTEMPTS)


async def index_record(store: ObjectStore, home: Home, record: ConversationRecord) -> None:
    await record_search_document(store, home, await asyncio.to_thread(_document, record))


def _document(record: ConversationRecord) -> SearchDocument:
    summary = record.summary
    return document_for(
        record.thread_ts,
        summary.title if summary is not None else "",
        summary.body if summary is not None else "",
        record.messages,
        max((m.at for m in record.messages), default=record.started),
        record.started,
        record.owner.channel,
    )


# What a person can forget one of, by name (their Home tab's buttons, the forget tool).
FORGETTABLE = ("preference", "note", "conversation")


async def forget_item(store: ObjectStore, user_id: str, kind: str, item: str) -> int:
    """One item of the person's own memory, named as the Home tab lists it (a preference key, a note
    path, a thread id); how many objects changed or went. ValueError for a name that is not
    theirs."""
    if kind == "preference":
        return int(await forget_preference(store, user_id, item))
    if kind == "note":
        return int(await forget_note(store, user_id, person_memory_key(user_id, to_key(item))))
    return await forget_conversation(store, user_id, item)


async def forget_preference(store: ObjectStore, user_id: str, key: str) -> bool:
    """One preference of the person's (with where it was learned), the undo records that
    hold the file as it was (with it), and the welcome; True when there was one."""
    guard = await Guard.reading(store, person(user_id))
    forgotten = False

    def transform(current: str | None) -> str | None:
        nonlocal forgotten
        kept = without_preference(current, key)
        forgotten = kept != current
        return kept

    preferences = preferences_key(user_id)
    # First: an Undo clicked in between would bring it back.
    await _drop_undo_records_holding(store, user_id, lambda changed: changed == preferences)
    await update(guard.store, preferences, transform)
    with contextlib.suppress(Forgotten):  # erased meanwhile: nothing is left to forget
        await guard.settle(without_welcome if forgotten else None)
    return forgotten


async def forget_note(store: ObjectStore, user_id: str, key: str) -> bool:
    """One file of the person's memory, the undo records that would bring it back, and
    the welcome; anything else (another person's) is refused."""
    home = person(user_id)
    if not key.startswith(home.memory_prefix) or "/../" in f"/{key}/":
        raise ValueError("not one of this person's notes")
    guard = await Guard.reading(store, home)
    await _drop_undo_records_holding(store, user_id, lambda changed: changed == key)
    forgotten = await store.delete(key)
    with contextlib.suppress(Forgotten):  # erased meanwhile: nothing is left to forget
        await guard.settle(without_welcome if forgotten else None)
    return forgotten


async def forget_conversation(store: ObjectStore, user_id: str, thread_ts: str) -> int:
    """One conversation's record, notes, search entry, undo records and welcome; how many objects
    went. Marked forgotten first, so a turn still answering in it takes back what it writes."""
    home = person(user_id)
    listing = await store.list(home.notes_prefix(thread_ts))
    conversation = home.conversation_key(thread_ts)
    known = await store.read(conversation)
    moment = datetime.now(UTC)
    listed: list[bool] = []

    def forgetting(current: str | None) -> str:
        profile = Profile.to_update(current)
        listed[:] = [profile.entry(thread_ts) is not None]
        changed = without_welcome(profile.forgetting(thread_ts, moment), thread_ts=thread_ts)
        return changed.render(cutoff=cutoff_of(store))

    if known is None and not listing:
        profile = await store.read(home.profile_key)
        kept = Profile.parse(profile.content if profile else None)
        # One forgotten already may still be searchable: that forget was cut short.
        if kept.entry(thread_ts) is None and thread_ts not in kept.forgotten:
            return 0
    # Left as it is (none Orion writes is too large to read): no turn of theirs writes.
    with contextlib.suppress(Unreadable, ObjectTooLarge):
        await update(store, home.profile_key, forgetting)
    notes = home.notes_prefix(thread_ts)
    await _drop_undo_records_holding(store, user_id, lambda changed: changed.startswith(notes))
    # The search entry before the conversation: once it is gone no search, on any
    # instance, names the conversation (nor shows what it kept of it).
    await remove_documents(store, home, {thread_ts})
    deleted = await delete_all(store, [conversation, *(obj.key for obj in listing)])
    return max(1, deleted + int(bool(listed and listed[0])))


async def _drop_undo_records_holding(
    store: ObjectStore, user_id: str, forgotten: Callable[[str], bool]
) -> int:
    """Drop the person's undo records that name a file `forgotten` says goes; how many. Else an
    older answer's Undo would take a file it deleted, still absent, for "unchanged since" and create
    it again; dropped before the files go, so that no Undo brings one back in between."""
    home = person(user_id)
    listing = await store.list(f"{home.prefix}undo/")

    async def drop_if_holding(listed: ObjectInfo) -> bool:
        stored = await store.read(listed.key)
        if stored is None or not any(forgotten(k) for k in _changed_keys(stored)):
            return False
        with contextlib.suppress(PreconditionFailed):
            return await store.delete(listed.key, if_generation=stored.generation)
        return False

    return sum(await at_most(DELETE_CONCURRENCY, listing, drop_if_holding))


def _changed_keys(stored: StoredObject) -> list[str]:
    """The files an undo record would rewrite (its format: app/learning/undo.py, which
    imports this module, so only the keys are read here)."""
    changes = load_json_object(stored.content, what="undo_record").get("changes")
    if not isinstance(changes, list):
        return []
    return [c["key"] for c in changes if isinstance(c, dict) and isinstance(c.get("key"), str)]


async def delete_all(store: ObjectStore, keys: list[str]) -> int:
    return sum(await at_most(DELETE_CONCURRENCY, keys, store.delete))
