"""`recall`: the person's own past sessions, best keyword match first, never anyone else's."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from anthropic.tools import ToolError

from app.agent.tool_registry import ToolRegistry
from app.learning.profile import ConversationEntry, Profile
from app.learning.recall import RecallTool
from app.learning.search_index import (
    document_for,
    record_search_document,
    remove_documents,
    with_documents,
)
from app.learning.search_terms import query_terms
from app.learning.timestamps import format_time
from app.memory.homes import person
from app.memory.scopes import MemoryScope
from app.storage.store import ObjectStore, update
from tests.backends import OTHER_USER, THREAD, USER
from tests.layout import conversation

DAY = timedelta(days=1)
START = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
SESSIONS = [
    # (thread, title, summary, days after START)
    ("1712000001.000001", "Q3 budget review", "Cloud spend is over the Q3 budget.", 1),
    ("1712000002.000002", "Hiring plan", "Two data engineers in Q4.", 2),
    ("1712000003.000003", "Offsite in Lisbon", "The travel budget is fine.", 3),
    ("1712000004.000004", "Vendor contracts", "Renewals; the budget owner is Priya.", 4),
]
OTHERS = ("1712000009.000009", "Q3 budget for sales", "Bob's Q3 budget: two more AEs.", 5)


async def seed(store: ObjectStore, user: str, sessions: list[tuple[str, str, str, int]]) -> None:
    """Each conversation, with its summary, in `user`'s home, and its search entry."""
    home = person(user)
    for thread, title, body, day in sessions:
        updated = START + day * DAY
        kept = conversation(user, thread, summary=body, title=title, at=updated)
        await store.write(home.conversation_key(thread), kept)
        await record_search_document(store, home, document_for(thread, title, body, [], updated))


def tool(store: ObjectStore, user: str = USER) -> RecallTool:
    return RecallTool(store, MemoryScope(user, THREAD))


def titles(result: str | list[dict]) -> list[str]:
    """The titles of the conversations a search returned, best first."""
    if isinstance(result, str):
        return []
    return [b["title"].rsplit(" (", 1)[0] for b in result if b["type"] == "search_result"]


def text(result: str | list[dict]) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did we discuss about the Q3 budget last week?", [("q3",), ("budget", "budg")]),
        ("hiring, Hiring and HIRING", [("hire", "hiring", "hir")]),
        ("recap our last conversation", [("recap",)]),
        ("what did we talk about?", []),
    ],
)
def test_queries_drop_the_words_that_only_ask_to_search(query: str, expected: list[str]) -> None:
    assert query_terms(query) == expected


async def test_best_match_first_then_recent_first_on_ties(store: ObjectStore) -> None:
    await seed(store, USER, SESSIONS)
    result = await tool(store).call({"query": "Q3 budget"})
    # Both words in the title beat one word in the summary; equal scores: newest first.
    # "budget" once in each of the other two: the shorter conversation first (BM25).
    assert titles(result) == ["Q3 budget review", "Offsite in Lisbon", "Vendor contracts"]
    first = result[1]
    assert first["title"] == "Q3 budget review (2026-05-02, conversation 1712000001.000001)"
    assert first["citations"] == {"enabled": True}
    summary = "Orion's summary of the conversation:\n> Cloud spend is over the Q3 budget."
    assert first["content"] == [{"type": "text", "text": summary}]
    assert first["source"] == "conversation 1712000001.000001"  # no DM known: no link


async def test_keywords_match_word_beginnings(store: ObjectStore) -> None:
    await seed(store, USER, SESSIONS)
    assert titles(await tool(store).call({"query": "engineer"})) == ["Hiring plan"]
    assert titles(await tool(store).call({"query": "lisbon offsites"})) == ["Offsite in Lisbon"]


async def test_each_part_of_a_question_brings_back_its_best_conversation(
    store: ObjectStore,
) -> None:
    await seed(store, USER, SESSIONS)
    recall = tool(store)
    best_of_each = [
        *titles(await recall.call({"queries": ["budget"], "limit": 1})),
        *titles(await recall.call({"queries": ["engineers"], "limit": 1})),
    ]
    both = await recall.call({"queries": ["budget", "engineers"], "limit": 2})
    assert titles(both) == best_of_each and "Hiring plan" in best_of_each
    assert '"budget"; "engineers"' in both[0]["text"]


async def test_how_many_more_conversations_matched_is_said(store: ObjectStore) -> None:
    await seed(store, USER, SESSIONS)
    result = await tool(store).call({"queries": ["budget"], "limit": 1})
    assert len(titles(result)) == 1
    assert "2 more earlier conversation(s) matched" in result[0]["text"]
    everything = await tool(store).call({"queries": ["budget"]})
    assert "more earlier conversation" not in everything[0]["text"]


async def test_a_time_range_favours_conversations_held_then_without_hiding_the_others(
    store: ObjectStore,
) -> None:
    await seed(store, USER, SESSIONS)
    # Only the vendor conversation went on from May 5th: it comes first among "budget"…
    ranged = {"queries": ["budget"], "after": "2026-05-05"}
    result = await tool(store).call(ranged)
    assert titles(result)[0] == "Vendor contracts" and len(titles(result)) == 3
    assert "in turn with the best matches" in result[0]["text"]
    # …and a conversation held before it is still found by its words.
    found = await tool(store).call({"queries": ["engineers"], "after": "2026-05-05"})
    assert titles(found) == ["Vendor contracts", "Hiring plan"]  # held then; then the words


async def test_what_the_person_wrote_is_searched_beside_claudes_words(store: ObjectStore) -> None:
    await seed(store, USER, SESSIONS)
    await seed(store, OTHER_USER, [OTHERS])
    # Claude's words find the hiring plan; the person's, the conversation naming the
    # budget owner, which Claude's words miss. Neither reaches anyone else's.
    asked = RecallTool(store, MemoryScope(USER, THREAD), message="Who is Bob's budget owner?")
    found = await asked.call({"queries": ["engineers"], "limit": 2})
    assert titles(found) == ["Hiring plan", "Vendor contracts"]
    assert titles(await tool(store).call({"queries": ["engineers"], "limit": 2})) == ["Hiring plan"]
    assert "Bob" not in text(found) and "sales" not in text(found)
    # Asked for the most recent, the most recent come, whatever the person wrote.
    recent = await asked.call({"queries": [""], "limit": 2})
    assert titles(recent) == ["Vendor contracts", "Offsite in Lisbon"]


async def test_a_part_of_only_asking_words_brings_nothing_of_its_own(store: ObjectStore) -> None:
    await seed(store, USER, SESSIONS)
    # "what did we talk about" names nothing: not the newest conversations beside the match.
    found = await tool(store).call({"queries": ["what did we talk about", "engineers"]})
    assert titles(found) == ["Hiring plan"]


async def test_an_empty_topic_lists_the_most_recent(store: ObjectStore) -> None:
    await seed(store, USER, SESSIONS)
    result = await tool(store).call({"query": "", "limit": 2})
    assert titles(result) == ["Vendor contracts", "Offsite in Lisbon"]


async def test_nothing_found_and_nothing_yet_are_said_plainly(store: ObjectStore) -> None:
    assert "no earlier conversations" in await tool(store).call({"query": "x"})
    await seed(store, USER, SESSIONS)
    assert "No earlier conversation" in await tool(store).call({"query": "kubernetes"})


async def test_only_the_persons_own_sessions_are_searched(store: ObjectStore) -> None:
    await seed(store, USER, SESSIONS)
    await seed(store, OTHER_USER, [OTHERS])
    mine = await tool(store).call({"query": "sales Q3 budget", "user_id": OTHER_USER})
    assert "Q3 budget for sales" not in text(mine) and "Bob" not in text(mine)
    theirs = await tool(store, OTHER_USER).call({"query": "Q3 budget"})
    assert titles(theirs) == ["Q3 budget for sales"]


async def test_a_forged_index_cannot_reach_another_persons_session(store: ObjectStore) -> None:
    # The person's memory directory is Claude's to write: listing someone else's thread
    # there reaches nothing.
    await seed(store, OTHER_USER, [OTHERS])
    await seed(store, USER, SESSIONS)
    thread, title, _, _ = OTHERS
    forged = [{"thread": thread, "title": title}]
    await store.write(f"{person(USER).memory_prefix}search.json", json.dumps(forged))

    result = await tool(store).call({"query": "sales Q3 budget"})
    assert "Q3 budget for sales" not in text(result) and thread not in text(result)
    assert titles(result)[0] == "Q3 budget review"


async def test_an_entry_whose_conversation_is_not_in_the_persons_home_is_never_recalled(
    store: ObjectStore,
) -> None:
    # Mira's index names Bob's thread, whose conversation lives in Bob's home: a search
    # reads conversations only in the searcher's own home, and finds nothing of his.
    thread, title, body, day = OTHERS
    await seed(store, OTHER_USER, [OTHERS])
    await seed(store, USER, SESSIONS)
    mira = person(USER)
    document = document_for(thread, title, body, [], START + day * DAY)
    await record_search_document(store, mira, document)

    result = await tool(store).call({"query": "sales Q3 budget"})
    assert "Q3 budget for sales" not in text(result) and "AEs" not in text(result)
    assert titles(result)[0] == "Q3 budget review"


async def test_the_current_thread_and_vanished_sessions_are_left_out(store: ObjectStore) -> None:
    current = (THREAD, "This very thread", "About the Q3 budget too.", 9)
    await seed(store, USER, [*SESSIONS, current])
    await store.delete(person(USER).conversation_key(SESSIONS[0][0]))
    result = await tool(store).call({"query": "Q3 budget"})
    assert "This very thread" not in text(result) and "Q3 budget review" not in text(result)
    assert titles(result) == ["Offsite in Lisbon", "Vendor contracts"]  # the shorter first


async def test_a_search_sees_what_another_instance_wrote_into_the_index_since(
    store: ObjectStore,
) -> None:
    """This instance keeps the index its turn end wrote and its searches read; another
    instance's turn end (a conversation added) and its forgetting (one removed) are seen
    by the next search all the same."""
    await seed(store, USER, SESSIONS)
    assert "Hiring plan" in titles(await tool(store).call({"query": "engineers"}))
    home, added = person(USER), ("1712000005.000005", "Data team", "Two engineers hired.", 6)
    await store.write(
        home.conversation_key(added[0]),
        conversation(USER, added[0], summary=added[2], title=added[1], at=START + 6 * DAY),
    )
    elsewhere = document_for(added[0], added[1], added[2], [], START + 6 * DAY)
    await update(store, home.search_key, lambda raw: with_documents(raw, [elsewhere]))

    assert titles(await tool(store).call({"query": "engineers"})) == ["Data team", "Hiring plan"]

    await remove_documents(store, home, {SESSIONS[1][0]})  # the conversation is still kept
    assert titles(await tool(store).call({"query": "engineers"})) == ["Data team"]


@pytest.mark.parametrize(
    "bad_input",
    [
        "Q3 budget",
        {"query": 3},
        {"query": "x", "limit": 0},
        {"query": "x", "limit": 11},
        {"query": "x", "limit": True},
        {"queries": [1]},
        {"queries": {"q": "x"}},
        {"queries": ["a", "b", "c", "d", "e"]},
    ],
)
async def test_malformed_input_is_a_model_visible_error(
    store: ObjectStore, bad_input: object
) -> None:
    with pytest.raises(ToolError):
        await tool(store).call(bad_input)


async def test_the_registry_offers_and_runs_it(store: ObjectStore) -> None:
    await seed(store, USER, SESSIONS)
    registry = ToolRegistry([tool(store)])
    [param] = registry.params()
    assert param["name"] == "recall" and param["input_schema"]["required"] == ["queries"]
    assert "user" not in json.dumps(param["input_schema"]["properties"])
    result = (await registry.outcome("toolu_1", "recall", {"queries": ["hiring"]})).result
    assert result["tool_use_id"] == "toolu_1" and titles(result["content"]) == ["Hiring plan"]
    error = (await registry.outcome("toolu_2", "recall", {"query": 1})).result
    assert error["is_error"] is True


def test_profile_timestamps_round_trip() -> None:
    entry = ConversationEntry(SESSIONS[0][0], SESSIONS[0][1], START)
    # Written as the profile's format says, and read back as the same moment.
    assert entry.to_json()["updated"] == format_time(START) == "2026-05-01T09:00:00Z"
    assert Profile.parse(Profile().with_conversation(entry).render()).conversations == (entry,)
