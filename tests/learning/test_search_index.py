"""Each owner's search index (`{home}/search.json`): written at turn end, never losing a
concurrent thread's entry, within retention, forgotten with its conversation, read once
per search, and a search that tells storage trouble apart from "nothing found". Every
test runs on both backends (the GCS one enforces the generation preconditions optimistic
updates rely on)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import pytest
from anthropic.tools import ToolError

from app.agent.history import ThreadMessage
from app.learning import search_index
from app.learning.conversation_record import said
from app.learning.erasure import forget_conversation
from app.learning.guard import Guard
from app.learning.recall import COULD_NOT_SEARCH, RecallTool
from app.learning.search_index import (
    document_for,
    parse_search_index,
    record_search_document,
    with_documents,
)
from app.learning.session_summary import learn_from_turn
from app.learning.summary_file import SummaryDraft
from app.memory import secret_free_store
from app.memory.homes import person
from app.memory.retention import SessionRetention
from app.memory.scopes import MemoryScope
from app.storage.gcs import GcsObjectStore
from app.storage.local_directory import LocalDirectoryStore
from app.storage.store import ObjectStore, StoredObject, StoreLayer
from tests.backends import THREAD, USER, Backend
from tests.fakes.fault_proxy import FaultyProxy
from tests.layout import conversation, profile

NOW = datetime.now(UTC).replace(microsecond=0)
DM = "D0123ABCD"
DAY = timedelta(days=1)
HOME = person(USER)


def threads(count: int) -> list[str]:
    return [f"{1_712_000_000 + n}.{n:06d}" for n in range(count)]


def stored_threads(backend: Backend, user: str = USER) -> list[str]:
    return parse_search_index(backend.raw_read(person(user).search_key)).threads


async def write_conversation(
    store: ObjectStore, thread: str, title: str, body: str, updated: datetime
) -> None:
    """A conversation as Orion keeps it: its object (with the summary) and its search
    entry."""
    kept = conversation(USER, thread, channel_id=DM, title=title, summary=body, at=updated)
    await store.write(HOME.conversation_key(thread), kept)
    await record_search_document(store, HOME, document_for(thread, title, body, [], updated))


def recall(store: ObjectStore) -> RecallTool:
    return RecallTool(store, MemoryScope(USER, THREAD))


async def test_each_turn_end_writes_the_threads_entry_with_its_summary(
    store: ObjectStore, backend: Backend
) -> None:
    history = [
        ThreadMessage("user", "Can we cut the Q3 cloud bill? Spot instances for batch jobs?"),
        ThreadMessage("assistant", "Yes: moving batch jobs to spot instances saves about 20%."),
    ]

    async def summarize(previous: object, material: object) -> SummaryDraft:
        return SummaryDraft("Q3 cloud bill", "Spot instances for the batch jobs.")

    # The answer's end wrote the conversation's object; the turn end then learns from it.
    said_in_thread = [(m.role, m.text) for m in history]
    await store.write(
        HOME.conversation_key(THREAD), conversation(USER, THREAD, messages=said_in_thread)
    )
    await learn_from_turn(
        await Guard.reading(store, HOME),
        thread_ts=THREAD,
        channel=DM,
        history=history,
        previous=None,
        summarize=summarize,
        now=NOW,
    )
    index = parse_search_index(backend.raw_read(HOME.search_key))
    assert index.threads == [THREAD] and index.updated == [int(NOW.timestamp())]
    for term in ("q3", "cloud", "bill", "spot", "instanc", "batch", "save"):
        assert index.postings(term), term  # the summary's words and the messages'
    result = await RecallTool(store, MemoryScope(USER, "1712999999.000001")).call(
        {"query": "saves 20%"}  # said in a message, not in the summary
    )
    found = [block["title"] for block in result if block["type"] == "search_result"]
    assert len(found) == 1 and found[0].startswith("Q3 cloud bill (")


async def test_concurrent_turn_ends_on_two_instances_lose_no_entry(backend: Backend) -> None:
    # A second instance: its own client (or directory handle) on the same objects.
    if backend.emulator is not None:
        assert backend.bucket is not None
        other: ObjectStore = GcsObjectStore(backend.bucket)
    else:
        assert backend.directory is not None
        other = LocalDirectoryStore(backend.directory)
    instances = [backend.store, other]
    started = threads(12)
    await asyncio.gather(
        *(
            record_search_document(
                instances[n % 2], HOME, document_for(thread, f"Topic {n}", "Body.", [], NOW)
            )
            for n, thread in enumerate(started)
        )
    )
    assert sorted(stored_threads(backend)) == started


async def _an_old_and_a_new_plan(
    backend: Backend, clock: list[datetime]
) -> tuple[ObjectStore, str, str]:
    """A store kept for 30 days by `clock`, indexing an old conversation (25 days before NOW)
    and a new one (NOW)."""
    store = secret_free_store.kept(backend.store, SessionRetention(days=30, clock=lambda: clock[0]))
    old, new = threads(2)
    await record_search_document(
        store, HOME, document_for(old, "Old plans", "", [], NOW - 25 * DAY)
    )
    await record_search_document(store, HOME, document_for(new, "New plans", "", [], NOW))
    return store, old, new


async def test_every_conversation_within_retention_is_kept_and_expired_ones_go(
    backend: Backend,
) -> None:
    clock = [NOW]
    store, old, new = await _an_old_and_a_new_plan(backend, clock)
    assert stored_threads(backend) == [new, old]
    # Ten days on (the index itself was written since): the old entry is past the window.
    clock[0] = NOW + 10 * DAY
    raw = backend.raw_read(HOME.search_key)
    cutoff = clock[0] - 30 * DAY
    assert parse_search_index(raw, cutoff=cutoff).threads == [new]
    assert "Old plans" not in json.dumps(await recall(store).call({"query": "plans"}))
    await record_search_document(store, HOME, document_for(THREAD, "Today", "", [], clock[0]))
    assert stored_threads(backend) == [THREAD, new]


async def test_no_count_cap_below_retention(store: ObjectStore, backend: Backend) -> None:
    many = threads(600)
    raw = None
    for n, thread in enumerate(many):
        raw = with_documents(raw, [document_for(thread, f"Topic {n}", "Body.", [], NOW)])
    assert raw is not None
    await store.write(HOME.search_key, raw)
    assert len(stored_threads(backend)) == 600


async def test_forgetting_a_conversation_removes_its_entry(
    store: ObjectStore, backend: Backend
) -> None:
    kept_thread, forgotten = threads(2)
    for thread, title in ((kept_thread, "Hiring plan"), (forgotten, "Offsite in Lisbon")):
        await write_conversation(store, thread, title, "Details.", NOW)
    await store.write(
        HOME.profile_key, profile(conversations=[(kept_thread, "Hiring plan"), (forgotten, "x")])
    )
    assert await forget_conversation(store, USER, forgotten) >= 1
    assert stored_threads(backend) == [kept_thread]
    assert "Offsite" not in json.dumps(await recall(store).call({"query": "offsite Lisbon"}))


async def test_a_conversation_found_then_forgotten_is_not_found_again(
    store: ObjectStore, backend: Backend
) -> None:
    # The first search keeps the index it parsed for the next; the forgetting rewrites
    # the index, and the next search must see that, not what the first one parsed.
    kept_thread, forgotten = threads(2)
    for thread, title in ((kept_thread, "Hiring plan"), (forgotten, "Offsite in Lisbon")):
        await write_conversation(store, thread, title, "Details of the offsite.", NOW)
    await store.write(
        HOME.profile_key, profile(conversations=[(kept_thread, "Hiring plan"), (forgotten, "x")])
    )
    assert "Offsite in Lisbon" in json.dumps(await recall(store).call({"query": "offsite"}))

    assert await forget_conversation(store, USER, forgotten) >= 1

    again = json.dumps(await recall(store).call({"query": "offsite Lisbon"}))
    assert "Offsite in Lisbon" not in again and "Hiring plan" in again
    assert "more earlier conversation" not in again  # not even counted


async def test_a_conversation_searched_before_it_expires_is_not_found_after(
    backend: Backend,
) -> None:
    # The index is not written between the two searches: the second parses nothing and
    # still leaves out what has expired since the first.
    clock = [NOW]
    store, old, new = await _an_old_and_a_new_plan(backend, clock)
    for thread, title, at in ((old, "Old plans", NOW - 25 * DAY), (new, "New plans", NOW)):
        kept = conversation(USER, thread, title=title, summary="Plans.", at=at)
        await store.write(HOME.conversation_key(thread), kept)
    assert "Old plans" in json.dumps(await recall(store).call({"query": "plans"}))

    clock[0] = NOW + 10 * DAY

    later = json.dumps(await recall(store).call({"query": "plans"}))
    assert "Old plans" not in later and "New plans" in later


async def test_a_search_reads_the_index_then_only_the_conversations_it_returns(
    backend: Backend,
) -> None:
    counting = CountingReads(backend.store)
    old = threads(40)
    for n, thread in enumerate(old):
        await write_conversation(
            backend.store, thread, f"Weekly sync {n}", "Status.", NOW - timedelta(hours=n)
        )
    await write_conversation(
        backend.store, old[-1], "Offsite in Lisbon", "Venue booked.", NOW - timedelta(days=20)
    )

    found = await recall(counting).call({"query": "offsite Lisbon", "limit": 3})

    assert "Offsite in Lisbon" in json.dumps(found)
    assert counting.reads <= 1 + 3  # bench/recall_hard.py measures it at scale


async def test_storage_down_is_an_error_to_the_model_never_nothing_found(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    store = GcsObjectStore(gcs_bucket, retry_timeout=0.5, request_timeout=1.0)
    await write_conversation(store, THREAD, "Offsite", "Venue.", NOW)
    gcs_proxy.add_rule(HOME.search_key, status=503)
    with pytest.raises(ToolError) as raised:
        await RecallTool(store, MemoryScope(USER, "1712999999.000001")).call({"query": "x"})
    assert str(raised.value) == COULD_NOT_SEARCH
    await store.close()


async def test_after_a_turn_end_here_a_search_only_asks_whether_the_index_changed(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    """The index this instance's turn end wrote is kept: the next search, through the
    store as Orion keeps memories, sends the generation it has and GCS answers 304."""
    gcs = GcsObjectStore(gcs_bucket)
    store = secret_free_store.kept(gcs, SessionRetention())
    await write_conversation(store, "1712000001.000001", "Offsite in Lisbon", "Venue.", NOW)
    before = len(gcs_proxy.requests)
    gcs_proxy.add_rule("ifGenerationNotMatch", status=304)

    result = await recall(store).call({"queries": ["venue"]})

    assert isinstance(result, list) and "Offsite in Lisbon" in json.dumps(result)
    searched = gcs_proxy.requests[before:]
    asked = [r.status for r in searched if r.method == "GET" and r.names(HOME.search_key)]
    assert asked == [304]
    await gcs.close()


TITLES = ["Trip — Lisbon", "予算会議 (Q3)", "Café à Paris", "passcode は秘密", "Grüße 🎉"]


async def test_an_index_is_stored_as_ascii_and_shows_every_title_as_it_was_said(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    """Titles in any script are kept escaped in the stored index's entries, so that an
    index whose words are ASCII is read as ASCII (docs/benchmarks.md); a search shows them
    as they were, and the store's redaction leaves the index as written (the next search
    is answered 304)."""
    gcs = GcsObjectStore(gcs_bucket)
    store = secret_free_store.kept(gcs, SessionRetention())
    for n, title in enumerate(TITLES):
        thread = f"1712000001.00000{n}"
        await write_conversation(store, thread, title, "Venue booked.", NOW - n * DAY)
    raw = await gcs.read(HOME.search_key)
    assert raw is not None and raw.content.split("\n", 1)[0].isascii()
    gcs_proxy.add_rule("ifGenerationNotMatch", status=304)
    before = len(gcs_proxy.requests)

    result = await recall(store).call({"queries": ["venue"]})

    titles = [block["title"] for block in result if block["type"] == "search_result"]
    assert sorted(title.split(" (")[0] for title in titles) == sorted(
        title.split(" (")[0] for title in TITLES
    )
    searched = gcs_proxy.requests[before:]
    asked = [r.status for r in searched if r.method == "GET" and r.names(HOME.search_key)]
    assert asked == [304]
    await gcs.close()


async def test_an_index_written_before_with_titles_unescaped_is_searched_then_rewritten_ascii(
    backend: Backend,
) -> None:
    """Upgrades keep everything: an index as the last version wrote it (titles as said) is
    searched as it is, and its next turn end writes it escaped."""
    first, second = "1712000001.000001", "1712000002.000002"
    await write_conversation(backend.store, first, "Trip — Lisbon", "Venue booked.", NOW - DAY)
    raw = backend.raw_read(HOME.search_key)
    assert raw is not None
    header, body = raw.split("\n", 1)
    unescaped = json.dumps(json.loads(header), ensure_ascii=False, separators=(",", ":"))
    await backend.store.write(HOME.search_key, f"{unescaped}\n{body}")
    search_index._parsed_kept.clear()

    result = await recall(backend.store).call({"queries": ["venue"]})

    assert "Trip — Lisbon" in json.dumps(result, ensure_ascii=False)
    await write_conversation(backend.store, second, "Café", "Menu.", NOW)
    rewritten = backend.raw_read(HOME.search_key)
    assert rewritten is not None and rewritten.split("\n", 1)[0].isascii()
    assert stored_threads(backend) == [second, first]


async def test_an_index_forgotten_in_storage_is_not_kept_here_after_the_next_search(
    store: ObjectStore,
) -> None:
    """What this instance kept of an index (a turn end's, a search's) goes with the index:
    after a Forget everything elsewhere, the person's words do not stay in its memory."""
    await write_conversation(store, "1712000001.000001", "Offsite in Lisbon", "Venue.", NOW)
    assert "Offsite in Lisbon" in json.dumps(await recall(store).call({"queries": ["venue"]}))
    kept = search_index._parsed_kept
    here = ("", HOME.search_key)  # no workspace: single-workspace mode
    assert here in kept, "kept after the turn end"
    await store.delete(HOME.search_key)  # as Forget everything, on any instance

    result = await recall(store).call({"queries": ["venue"]})

    assert "Offsite in Lisbon" not in json.dumps(result)
    assert here not in kept


class CountingReads(StoreLayer):
    reads = 0

    async def read(self, key: str) -> StoredObject | None:
        self.reads += 1
        return await super().read(key)


async def test_a_turn_end_indexes_every_message_of_the_transcript_it_is_handed(
    store: ObjectStore, backend: Backend
) -> None:
    # The turn's history holds only the newest exchange; the transcript (the conversation
    # as Orion keeps it) holds a detail said weeks before.
    transcript = [
        said("user", "Let's plan the billing page launch.", at=NOW - 20 * DAY),
        said("user", "Our puppy Biscuit chewed the projector cable.", at=NOW - 20 * DAY),
        said("assistant", "Copy from Dana, ship on Friday.", at=NOW - 20 * DAY),
        said("user", "Is Friday still the launch day?", at=NOW),
    ]
    history = [ThreadMessage("user", "Is Friday still the launch day?", sent_at=NOW.timestamp())]

    async def summarize(previous: object, material: object) -> SummaryDraft:
        return SummaryDraft("Billing page launch", "Ship on Friday.")

    await learn_from_turn(
        await Guard.reading(store, HOME),
        thread_ts=THREAD,
        channel=DM,
        history=[*history, ThreadMessage("assistant", "Yes: Friday, with Dana's copy. " * 4)],
        previous=None,
        summarize=summarize,
        transcript=transcript,
        now=NOW,
    )
    index = parse_search_index(backend.raw_read(HOME.search_key))
    assert index.threads == [THREAD] and index.channel(0) == DM
    assert index.started == [int((NOW - 20 * DAY).timestamp())]
    assert index.postings("biscuit") and index.postings("projector")


async def write_said(store: ObjectStore, thread: str, title: str, lines: list[str]) -> None:
    """A conversation with what was said in it, and its search entry as a turn end
    writes it (a new entry, with a new id, each time)."""
    messages = [("user", line) for line in lines]
    record = conversation(USER, thread, channel_id=DM, title=title, messages=messages, at=NOW)
    await store.write(HOME.conversation_key(thread), record)
    said_there = [said("user", line, at=NOW) for line in lines]
    await record_search_document(store, HOME, document_for(thread, title, "", said_there, NOW))


async def test_a_turns_next_search_shows_the_same_exchanges_without_reading_them_again(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    gcs = GcsObjectStore(gcs_bucket)
    store = secret_free_store.kept(gcs, SessionRetention())
    thread = "1712000001.000001"
    await write_said(store, thread, "Offsite", ["The offsite venue is the Lisbon Loft."])
    turn = recall(store)
    first = json.dumps(await turn.call({"queries": ["offsite venue"]}))
    before = len(gcs_proxy.requests)

    again = json.dumps(await turn.call({"queries": ["offsite venue"]}))

    assert "Lisbon Loft" in first and again == first
    read = [r for r in gcs_proxy.requests[before:] if r.method == "GET"]
    assert not any(r.names(HOME.conversation_key(thread)) for r in read)
    assert sum(r.names(HOME.search_key) for r in read) == 1  # asked whether it changed
    await gcs.close()


async def test_the_next_turn_reads_the_conversations_again(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    """What a turn's searches showed lasts the turn: nothing of a person's conversations
    stays in the process once their turn is over."""
    gcs = GcsObjectStore(gcs_bucket)
    store = secret_free_store.kept(gcs, SessionRetention())
    thread = "1712000001.000001"
    await write_said(store, thread, "Offsite", ["The offsite venue is the Lisbon Loft."])
    assert "Lisbon Loft" in json.dumps(await recall(store).call({"queries": ["venue"]}))
    before = len(gcs_proxy.requests)

    later = json.dumps(await recall(store).call({"queries": ["venue"]}))  # the next turn

    assert "Lisbon Loft" in later
    read = [r for r in gcs_proxy.requests[before:] if r.method == "GET"]
    assert sum(r.names(HOME.conversation_key(thread)) for r in read) == 1
    await gcs.close()


async def test_a_conversation_continued_elsewhere_is_shown_as_it_now_is(
    store: ObjectStore,
) -> None:
    thread = "1712000001.000001"
    await write_said(store, thread, "Offsite", ["The offsite venue is the Lisbon Loft."])
    turn = recall(store)
    assert "Lisbon Loft" in json.dumps(await turn.call({"queries": ["offsite venue"]}))
    # Another instance's turn end: the conversation goes on, its entry is written anew.
    await write_said(
        store,
        thread,
        "Offsite",
        ["The offsite venue is the Lisbon Loft.", "Update: the offsite venue moved to Porto."],
    )

    later = json.dumps(await turn.call({"queries": ["offsite venue"]}))

    assert "moved to Porto" in later


async def test_a_conversation_forgotten_elsewhere_is_not_shown_from_what_a_search_kept(
    store: ObjectStore,
) -> None:
    thread = "1712000001.000001"
    await write_said(store, thread, "Offsite", ["The offsite venue is the Lisbon Loft."])
    await write_said(store, "1712000002.000002", "Venue list", ["Other venue ideas."])
    turn = recall(store)
    assert "Lisbon Loft" in json.dumps(await turn.call({"queries": ["venue"]}))

    assert await forget_conversation(store, USER, thread)  # as on any instance

    assert "Lisbon Loft" not in json.dumps(await turn.call({"queries": ["venue"]}))


async def test_a_forget_cut_short_after_the_search_entry_went_shows_the_conversation_nowhere(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    """Forgetting removes the search entry before the conversation: when deleting the
    conversation fails, no search shows it, whether or not its turn had shown it."""
    store = GcsObjectStore(gcs_bucket, retry_timeout=0.5, request_timeout=1.0)
    thread = "1712000001.000001"
    await write_said(store, thread, "Offsite", ["The offsite venue is the Lisbon Loft."])
    await write_said(store, "1712000002.000002", "Venue list", ["Other venue ideas."])
    turn = recall(store)
    assert "Lisbon Loft" in json.dumps(await turn.call({"queries": ["venue"]}))
    gcs_proxy.add_rule(HOME.conversation_key(thread), status=503, method="DELETE")

    with pytest.raises(Exception):  # noqa: B017 - whatever storage raised, Forget says it failed
        await forget_conversation(store, USER, thread)

    assert "Lisbon Loft" not in json.dumps(await turn.call({"queries": ["venue"]}))
    assert "Lisbon Loft" not in json.dumps(await recall(store).call({"queries": ["venue"]}))
    await store.close()


async def test_a_turn_keeps_only_what_its_latest_search_showed(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    """However many searches a turn makes, it holds at most one search's conversations:
    a conversation an earlier search showed, and the latest did not, is read again."""
    gcs = GcsObjectStore(gcs_bucket)
    store = secret_free_store.kept(gcs, SessionRetention())
    lisbon, porto = "1712000001.000001", "1712000002.000002"
    await write_said(store, lisbon, "Offsite", ["The offsite venue is the Lisbon Loft."])
    await write_said(store, porto, "Catering", ["Catering comes from a place in Porto."])
    turn = recall(store)
    assert "Lisbon Loft" in json.dumps(await turn.call({"queries": ["venue"]}))
    assert "Porto" in json.dumps(await turn.call({"queries": ["catering"]}))
    before = len(gcs_proxy.requests)

    assert "Lisbon Loft" in json.dumps(await turn.call({"queries": ["venue"]}))

    read = [r for r in gcs_proxy.requests[before:] if r.method == "GET"]
    assert sum(r.names(HOME.conversation_key(lisbon)) for r in read) == 1
    assert not any(r.names(HOME.conversation_key(porto)) for r in read)
    await gcs.close()
