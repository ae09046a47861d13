"""Attacks on recall's search index (`people/{id}/search.json`) and on the search itself.

The index decides which threads a search can return, so nothing the person or Claude
writes may reach it; a corrupted or hostile one (malformed entries, wrong types, huge
terms, another person's threads, 2 MB and more) is read as far as it is sound, logged,
and rewritten by the next turn end — it never blocks a search, and never returns a thread
outside the person's own home. Questions and summaries of any shape and length cost
bounded work. Both backends throughout.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from anthropic.tools import ToolError

from app.learning.conversation_record import ConversationOwner, ConversationRecord, said
from app.learning.erasure import forget_conversation, forget_everything
from app.learning.recall import MAX_QUERY_CHARS, RecallTool
from app.learning.search_index import (
    MAX_BUCKET_CHARS,
    MAX_DOCUMENT_TERMS,
    SearchDocument,
    SearchIndex,
    document_for,
    parse_search_index,
    record_search_document,
    render_search_index,
    with_documents,
)
from app.learning.search_ranking import MAX_LOOKUPS, rank_parts
from app.learning.search_terms import MAX_QUERY_TERMS, MAX_TERM_CHARS, query_terms
from app.memory.homes import person
from app.memory.scopes import MemoryScope
from app.memory.team_keys import team_scoped
from app.memory.tool.model_paths import ModelPathStore
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.observability.logging import configure_logging
from app.storage.store import ObjectStore, StoredObject, StoreLayer
from app.storage.team_scope import Tenant, bound_tenant
from tests import log_events
from tests.backends import OTHER_USER, THREAD, USER, Backend
from tests.layout import conversation, profile
from tests.memory.tool.helpers import refused

NOW = datetime.now(UTC).replace(microsecond=0)
MINE, THEIRS, CURRENT = "1712000001.000001", "1712000002.000002", "1712999999.000009"
INDEX_PATH = f"/memories/people/{USER}/search.json"
TEAM_A, TEAM_B = Tenant(None, "TAAAA1"), Tenant(None, "TBBBB2")


def search_key(user: str) -> str:
    return person(user).search_key


async def seed(store: ObjectStore) -> None:
    """Mira's conversation about the Lisbon offsite; Otto's about his Lisbon salary talk,
    each in its person's home."""
    for user, thread, title, body in (
        (USER, MINE, "Offsite in Lisbon", "Venue booked in Alfama."),
        (OTHER_USER, THEIRS, "Salary review in Lisbon", "Otto's raise: 8%."),
    ):
        home = person(user)
        kept = conversation(user, thread, channel_id="D0123ABCD", title=title, summary=body, at=NOW)
        await store.write(home.conversation_key(thread), kept)
        await store.write(
            home.profile_key, profile(conversations=[(thread, title)], channel_id="D0123ABCD")
        )
        await record_search_document(store, home, document_for(thread, title, body, [], NOW))


async def turn_end(store: ObjectStore) -> None:
    """Mira's next turn end in her offsite conversation: its entry, written into her index
    anew (whatever the index held)."""
    document = document_for(MINE, "Offsite in Lisbon", "Venue booked in Alfama.", [], NOW)
    await record_search_document(store, person(USER), document)


async def rewritten_and_found(backend: Backend) -> None:
    """After her next turn end, the index is sound again and finds her conversation, and
    only hers."""
    await turn_end(backend.store)
    rewritten = parse_search_index(backend.raw_read(search_key(USER)))
    assert rewritten.threads == [MINE]
    found = await search(backend.store)
    assert "Offsite in Lisbon" in found and "Salary" not in found


@pytest.fixture
def log_stream() -> io.StringIO:
    stream = io.StringIO()
    configure_logging(level="INFO", fmt="json", stream=stream)
    return stream


def logged(stream: io.StringIO) -> list[str]:
    return [json.loads(line)["message"] for line in stream.getvalue().splitlines()]


async def search(store: ObjectStore, query: str = "Lisbon") -> str:
    """What the model reads, as text (search results as JSON)."""
    found = await RecallTool(store, MemoryScope(USER, CURRENT)).call({"query": query})
    return found if isinstance(found, str) else json.dumps(found, ensure_ascii=False)


@pytest.mark.parametrize(
    "command",
    [
        {"command": "view", "path": INDEX_PATH},
        {"command": "create", "path": INDEX_PATH, "file_text": "{}"},
        {"command": "str_replace", "path": INDEX_PATH, "old_str": "a", "new_str": "b"},
        {"command": "insert", "path": INDEX_PATH, "insert_line": 0, "insert_text": "x"},
        {"command": "delete", "path": INDEX_PATH},
        {"command": "rename", "old_path": INDEX_PATH, "new_path": f"/memories/users/{USER}/s"},
        {"command": "rename", "old_path": f"/memories/users/{USER}/a.md", "new_path": INDEX_PATH},
    ],
    ids=lambda c: c["command"],
)
async def test_the_memory_tool_cannot_read_or_write_the_search_index(
    backend: Backend, command: dict[str, Any]
) -> None:
    await seed(backend.store)
    scope = MemoryScope(USER, THREAD)
    tool = ScopedMemoryTool(ModelPathStore(backend.store, scope), scope)
    await backend.store.write(f"{person(USER).memory_prefix}a.md", "mine")
    before = backend.raw_read(search_key(USER))

    message = await refused(tool, command)

    assert message.startswith("Access denied:") and "Alfama" not in message
    assert backend.raw_read(search_key(USER)) == before


def _sound_entry() -> list[Any]:
    # A first-version entry: [thread, Unix seconds, terms].
    return [MINE, int(NOW.timestamp()), "offsite lisbon offsite lisbon venue booked alfama"]


HOSTILE_ENTRIES: dict[str, Any] = {
    "not a list": {"thread": MINE},
    "too short": [MINE, 1],
    "time as a string": [MINE, "2026-01-01", "lisbon"],
    "time as a bool": [MINE, True, "lisbon"],
    "negative time": [MINE, -5, "lisbon"],
    "terms as a list": [MINE, 1, ["lisbon"]],
    "terms over the bound": [MINE, 1, "lisbon " * 20_000],
    "a line break in the terms": [MINE, 1, "lisbon\nlisbon"],
    "a path for a thread": ["../../users/U0999ZZZZ/secret", 1, "lisbon"],
    "nested deep": [[[[[[[[[[[]]]]]]]]]]],
}


@pytest.mark.parametrize("name", list(HOSTILE_ENTRIES))
async def test_an_index_of_an_earlier_version_is_read_as_empty_and_rewritten(
    backend: Backend, name: str, log_stream: io.StringIO
) -> None:
    await seed(backend.store)
    hostile = {"version": 1, "complete": True, "docs": [HOSTILE_ENTRIES[name], _sound_entry()]}
    await backend.store.write(search_key(USER), json.dumps(hostile))
    found = await search(backend.store)
    assert "Otto" not in found and "Salary" not in found and "secret" not in found
    assert log_events.MEMORY_FILE_UNREADABLE in logged(log_stream)
    await rewritten_and_found(backend)


def _columns(body: str | None = None, **changed: Any) -> str:
    """A sound index (one entry, Orion's), with some of its parts changed."""
    index = SearchIndex(complete=True)
    index.add([document_for_mine()])
    header, postings = render_search_index(index).split("\n", 1)
    return json.dumps(json.loads(header) | changed) + "\n" + (postings if body is None else body)


def document_for_mine() -> SearchDocument:
    return document_for(MINE, "Offsite in Lisbon", "Venue booked in Alfama.", [], NOW)


DISAGREEING_COLUMNS: dict[str, str] = {
    "a thread that is a path": _columns(threads="../../users/U0999ZZZZ/secret"),
    "more threads than ids": _columns(threads=f"{MINE} {THEIRS}"),
    "a time as a bool": _columns(updated=[True]),
    "a time as a float": _columns(updated=[1.5]),
    "a negative time": _columns(updated=[-5]),
    "times not newest first": _columns(
        threads=f"{MINE} {THEIRS}",
        ids="0 1",
        updated=[1, 2],
        started=[1, 1],
        lengths=[1, 1],
        titles=["a", "b"],
        channels="- -",
    ),
    "a thread twice": _columns(
        threads=f"{MINE} {MINE}",
        ids="0 1",
        updated=[2, 1],
        started=[1, 1],
        lengths=[1, 1],
        titles=["a", "b"],
        channels="- -",
    ),
    "an id that is no id": _columns(ids="../x"),
    "lines not a power of two": _columns(buckets=[0, 1, 2, 3]),
    "lines past the body": _columns(body="\tlisbon,0"),
    "a line over the bound": _columns(
        body="\tsalary," + ",".join(["0"] * MAX_BUCKET_CHARS) + "\n" * 15,
        buckets=[
            0,
            MAX_BUCKET_CHARS * 2 + 9,
            *range(MAX_BUCKET_CHARS * 2 + 10, MAX_BUCKET_CHARS * 2 + 25),
        ],
    ),
    "titles as a text": _columns(titles="Offsite"),
    "a channel that is a link": _columns(channels="https://evil.example"),
    "threads as a list": _columns(threads=[MINE]),
}


@pytest.mark.parametrize("name", list(DISAGREEING_COLUMNS))
async def test_an_index_whose_columns_disagree_is_read_as_empty_and_rewritten(
    backend: Backend, name: str, log_stream: io.StringIO
) -> None:
    """Only Orion writes the index; one it did not write decides no thread a search can
    return: it is read as empty (logged), and the next turn end writes it sound again."""
    await seed(backend.store)
    await backend.store.write(search_key(USER), DISAGREEING_COLUMNS[name])

    found = await search(backend.store)

    assert "Salary" not in found and "Otto" not in found and "secret" not in found
    assert log_events.MEMORY_FILE_UNREADABLE in logged(log_stream)
    await rewritten_and_found(backend)


@pytest.mark.parametrize(
    "content",
    [
        "not json at all {",
        "[" * 100_000 + "]" * 100_000,  # nested past Python's recursion limit
        json.dumps({"version": 1, "docs": {"a": 1}}),
        json.dumps(["a list, not an object"]),
        json.dumps({"docs": [[MINE, 1, "x" * 1000]] * 3000}),  # 2 MB and more
    ],
    ids=["not-json", "nested", "docs-not-a-list", "not-an-object", "over-2-MB"],
)
async def test_an_unreadable_index_is_read_as_empty_then_rewritten_by_the_next_turn_end(
    backend: Backend, content: str, log_stream: io.StringIO
) -> None:
    await seed(backend.store)
    await backend.store.write(search_key(USER), content)
    found = await search(backend.store)
    # Read as empty (logged): the search answers, with nothing of anyone else's.
    assert "Salary" not in found and "Otto" not in found
    assert log_events.MEMORY_FILE_UNREADABLE in logged(log_stream)
    await rewritten_and_found(backend)


@pytest.mark.parametrize(
    "query",
    [
        "\u2003" * 40_000,  # a run of Unicode spaces
        "(" * 20_000 + ")" * 20_000,  # nested brackets
        "?!" * 20_000,  # repeated punctuation
        "a" * 40_000,  # one word
        "予算" * 20_000,  # one run of ideographs
        "lisbon " * 5_700,  # many words
        "ก่" * 20_000,  # Thai letters and tone marks
        "é\u0301\u0301" * 13_000,  # combining marks piled up
    ],
    ids=["spaces", "brackets", "punctuation", "word", "cjk", "words", "thai", "marks"],
)
async def test_a_40000_character_question_costs_bounded_work(backend: Backend, query: str) -> None:
    await seed(backend.store)
    assert len(query) >= 39_000
    groups = query_terms(query[:MAX_QUERY_CHARS])
    assert len(groups) <= MAX_QUERY_TERMS
    assert all(len(t) <= MAX_TERM_CHARS for group in groups for t in group)
    assert sum(map(len, groups)) <= MAX_QUERY_TERMS * 7  # looked up at most MAX_LOOKUPS
    assert MAX_LOOKUPS < MAX_QUERY_TERMS * 7
    found = await search(backend.store, query)
    assert "Otto" not in found and "Salary" not in found


async def test_a_question_in_many_long_parts_costs_one_searchs_bounded_work(
    backend: Backend,
) -> None:
    await seed(backend.store)
    recall = RecallTool(backend.store, MemoryScope(USER, CURRENT))
    with pytest.raises(ToolError, match="1 to 4"):
        await recall.call({"queries": ["lisbon"] * 5})
    # Four parts of 40,000 characters, every word a lookup: the parts share the lookups
    # of one search rather than each taking its own.
    parts = [" ".join(f"w{part}x{n}" for n in range(8_000)) for part in range(4)]
    index = parse_search_index(backend.raw_read(search_key(USER)))
    looked: list[str] = []
    span = index.span
    index.span = lambda term: looked.append(term) or span(term)  # type: ignore[method-assign]
    asked = [query_terms(part[:MAX_QUERY_CHARS]) for part in parts]
    rank_parts(index, asked, 5)
    assert 0 < len(looked) <= MAX_LOOKUPS
    found = json.dumps(await recall.call({"queries": [*parts[:3], "Lisbon"]}))
    assert "Offsite in Lisbon" in found and "Otto" not in found


def test_a_40000_character_summary_makes_a_bounded_entry() -> None:
    body = " ".join(f"word{n}" for n in range(8_000))[:40_000]
    document = document_for(MINE, "x" * 40_000, body, [], NOW)
    assert len(document.terms) <= MAX_DOCUMENT_TERMS
    assert all(len(term) <= MAX_TERM_CHARS for term in document.terms)
    assert len(document.title) <= 200


async def test_a_corrupted_index_blocks_neither_forgetting_one_conversation_nor_everything(
    backend: Backend,
) -> None:
    await seed(backend.store)
    await backend.store.write(search_key(USER), "[" * 100_000)
    assert await forget_conversation(backend.store, USER, MINE) >= 1
    assert backend.raw_read(person(USER).conversation_key(MINE)) is None
    await forget_everything(backend.store, USER)
    assert backend.raw_read(search_key(USER)) is None
    assert THEIRS in (backend.raw_read(search_key(OTHER_USER)) or "")


@pytest.mark.parametrize(
    "bad_input",
    [
        {"query": "x", "after": "2026-05-01" * 4_000},  # 40,000 characters
        {"query": "x", "after": "9999-99-99"},
        {"query": "x", "before": "2026-5-1"},
        {"query": "x", "before": True},
        {"query": "x", "after": ["2026-05-01"]},
        {"query": "x", "after": "2026-05-02", "before": "2026-05-01"},
        {"query": "x", "after": "２０２６-０５-０１"},  # full-width digits
    ],
)
async def test_a_forged_time_range_is_a_model_visible_error(
    backend: Backend, bad_input: dict[str, Any]
) -> None:
    await seed(backend.store)
    with pytest.raises(ToolError):
        await RecallTool(backend.store, MemoryScope(USER, CURRENT)).call(bad_input)


async def test_a_40000_character_message_in_a_transcript_makes_bounded_passages(
    backend: Backend,
) -> None:
    # A record as the conversations helper writes it, with the longest message it keeps.
    await seed(backend.store)
    record = ConversationRecord(MINE, ConversationOwner(USER, "D0123ABCD"), NOW).with_messages(
        [said("user", "Lisbon " * 6_000, at=NOW), said("user", "lisbon" * 7_000, at=NOW)]
    )
    await backend.store.write(person(USER).conversation_key(MINE), record.render())
    found = await RecallTool(backend.store, MemoryScope(USER, CURRENT)).call({"query": "Lisbon"})
    assert isinstance(found, list)
    texts = [c["text"] for b in found if b["type"] == "search_result" for c in b["content"]]
    assert texts and all(len(text) < 600 for text in texts)


async def test_a_sound_entry_naming_someone_elses_thread_finds_nothing_of_theirs(
    backend: Backend, log_stream: io.StringIO
) -> None:
    """Should Mira's index ever name Otto's thread (a bug, a hand edit), a search reads
    only her own home for it: his conversation is not there, and nothing of it is shown."""
    await seed(backend.store)
    his = document_for(THEIRS, "Salary review in Lisbon", "Otto's raise: 8%.", [], NOW)
    await record_search_document(backend.store, person(USER), his)

    found = await search(backend.store)

    assert "Offsite in Lisbon" in found
    assert "Salary" not in found and "8%" not in found and "Otto" not in found


class OneGeneration(StoreLayer):
    """A store whose every object reads as generation 1: the same generation for two
    workspaces' objects under one key, which GCS does not promise never happens."""

    async def read(self, key: str) -> StoredObject | None:
        stored = await self.inner.read(key)
        if stored is None:
            return None
        return StoredObject(stored.key, stored.content, 1, stored.updated, stored.size)


async def test_a_workspaces_search_never_gets_the_index_kept_for_another_workspace(
    backend: Backend,
) -> None:
    """Distribution mode: one person id, one key, two workspaces. The index a search kept
    for one workspace is never taken for the other's, even at the same generation."""
    store = team_scoped(OneGeneration(backend.store))
    home = person(USER)
    for team, title in ((TEAM_A, "Offsite in Lisbon"), (TEAM_B, "Salary review in Lisbon")):
        with bound_tenant(team):
            kept = conversation(
                USER, MINE, channel_id="D0123ABCD", title=title, summary="Lisbon.", at=NOW
            )
            await store.write(home.conversation_key(MINE), kept)
            index = with_documents(None, [document_for(MINE, title, "Lisbon.", [], NOW)])
            await store.write(home.search_key, index)

    with bound_tenant(TEAM_A):
        assert "Offsite in Lisbon" in await search(store)
    with bound_tenant(TEAM_B):
        found = await search(store)
    assert "Salary review in Lisbon" in found and "Offsite" not in found
