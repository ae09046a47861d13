"""What a person can see of their memory: the inventory, its document, and Claude's tools
for "what do you remember about me?" and "forget that"."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from anthropic.tools import ToolError

from app.learning.conversation_record import ConversationOwner
from app.learning.conversations import begin_conversation
from app.learning.memory_document import render_memory
from app.learning.memory_inventory import take_inventory
from app.learning.memory_tools import ForgetTool, MemoryOverviewTool
from app.learning.preference_detection import detect_preferences
from app.learning.preferences import save_preferences
from app.learning.session_index import SessionEntry, record_session
from app.learning.summary_file import SessionSummary, render_summary
from app.learning.timestamps import format_time
from app.memory.scopes import MemoryScope, session_context_key
from app.storage.store import ObjectStore
from tests.backends import OTHER_THREAD, OTHER_USER, THREAD, USER, Backend

DM = "D0123ABCD"
LEARNED = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
NOTE = "Q3 budget: the travel line is over by 12%.\nAsk Dana on Friday.\nThird.\nFourth.\n"


async def _seed(store: ObjectStore) -> None:
    found = detect_preferences("Please answer in French.")
    await save_preferences(store, USER, found, channel=DM, thread_ts=THREAD, now=LEARNED)
    await store.write(f"users/{USER}/notes/budget.md", NOTE)
    summary = SessionSummary("Q3 budget review", "We compared travel costs.", user_id=USER)
    await store.write(session_context_key(THREAD), render_summary(summary))
    await record_session(store, USER, SessionEntry(THREAD, "Q3 budget review", LEARNED, DM))
    # Someone else's summary, listed where this person (through Claude) can write — the
    # place the index used to live — and claimed as theirs: never shown as theirs.
    foreign = SessionSummary("Secret plans", "Another person's words.", user_id=USER)
    await store.write(session_context_key(OTHER_THREAD), render_summary(foreign))
    forged = [SessionEntry(OTHER_THREAD, "Secret plans", LEARNED, DM).to_json()]
    await store.write(f"users/{USER}/sessions.json", json.dumps(forged))


async def test_the_inventory_lists_every_kind_with_when_and_where(store: ObjectStore) -> None:
    await _seed(store)

    inventory = await take_inventory(store, USER)

    [language] = inventory.preferences
    assert (language.key, language.value) == ("language", "French")
    assert (language.learned.at, language.learned.channel, language.learned.thread_ts) == (
        LEARNED,
        DM,
        THREAD,
    )
    # Preferences are not a note; the forged index is just a file Claude wrote.
    note, forged = sorted(inventory.notes, key=lambda n: n.path)
    assert forged.path == f"/memories/users/{USER}/sessions.json"
    assert note.path == f"/memories/users/{USER}/notes/budget.md"
    assert note.size == len(NOTE) and note.preview == "\n".join([*NOTE.splitlines()[:3], "…"])
    assert note.content is None
    by_thread = {c.thread_ts: c for c in inventory.conversations}
    assert by_thread[THREAD].summary == "We compared travel costs."
    assert by_thread[THREAD].channel == DM
    assert list(by_thread) == [THREAD], "only Orion's record says which threads are theirs"


async def test_a_conversations_last_time_is_its_last_turn_not_the_days_first(
    store: ObjectStore,
) -> None:
    await _seed(store)  # indexed at LEARNED, the day's first turn (rewritten once a day)
    later = LEARNED + timedelta(hours=3)  # the summary of a later turn that day
    summary = SessionSummary("Q3 budget review", "And the hotels.", user_id=USER, updated=later)
    await store.write(session_context_key(THREAD), render_summary(summary))

    inventory = await take_inventory(store, USER)

    [conversation] = inventory.conversations
    assert conversation.updated == later
    assert f"last {format_time(later)}" in render_memory(inventory, full=False)


async def test_a_listed_thread_whose_record_names_someone_else_is_not_shown(
    store: ObjectStore,
) -> None:
    await _seed(store)
    # Orion's own index lists another person's thread (a forged event before records were
    # kept): the thread's record gives it to them, so it is not shown, nor counted.
    other = ConversationOwner(OTHER_USER, "D0999ZZZZ")
    await record_session(store, OTHER_USER, SessionEntry(OTHER_THREAD, "Plans", LEARNED))
    assert await begin_conversation(store, other, OTHER_THREAD, started=LEARNED)
    await record_session(store, USER, SessionEntry(OTHER_THREAD, "Secret plans", LEARNED, DM))

    inventory = await take_inventory(store, USER)

    assert [c.thread_ts for c in inventory.conversations] == [THREAD]
    assert inventory.conversations_total == 1
    assert "Another person's words" not in render_memory(inventory, full=True)


async def test_the_export_holds_everything_in_full(store: ObjectStore) -> None:
    await _seed(store)
    document = render_memory(await take_inventory(store, USER, full=True), full=True)
    for expected in (
        "language: French",
        "2026-11-02T09:30:00Z",
        NOTE.strip(),
        "Fourth.",
        "Q3 budget review",
        "We compared travel costs.",
    ):
        assert expected in document
    assert "Another person's words." not in document


async def test_claude_reads_out_the_real_inventory_and_forgets_one_item(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed(store)
    scope = MemoryScope(user_id=USER, thread_ts=THREAD)

    overview = await MemoryOverviewTool(store, scope).call({})
    assert "language: French" in overview and "notes/budget.md" in overview

    forget = ForgetTool(store, scope)
    assert "Forgotten" in await forget.call({"kind": "preference", "id": "language"})
    assert "French" not in (backend.raw_read(f"users/{USER}/preferences.json") or "")
    note = f"/memories/users/{USER}/notes/budget.md"
    await forget.call({"kind": "note", "id": note})
    assert backend.raw_read(f"users/{USER}/notes/budget.md") is None
    await forget.call({"kind": "conversation", "id": THREAD})
    assert backend.raw_read(session_context_key(THREAD)) is None


@pytest.mark.parametrize(
    "command",
    [
        {"kind": "everything", "id": USER},  # not offered to the model
        {"kind": "note", "id": f"/memories/users/{OTHER_USER}/notes.md"},
        {"kind": "preference", "id": "nothing-like-this"},
        {"kind": "note"},
        {"kind": "conversation", "id": "1712345999.999999"},  # another person's thread
    ],
    ids=["everything", "someone-elses-note", "unknown", "no-id", "someone-elses-thread"],
)
async def test_forget_refuses_what_is_not_the_persons_to_forget(
    store: ObjectStore, backend: Backend, command: dict[str, str]
) -> None:
    await _seed(store)
    await store.write(f"users/{OTHER_USER}/notes.md", "theirs\n")
    theirs = SessionSummary("Their plans", "Not yours.", user_id=OTHER_USER)
    await store.write(session_context_key("1712345999.999999"), render_summary(theirs))
    before = {name: backend.raw_read(name) for name in backend.raw_names()}
    with pytest.raises(ToolError):
        await ForgetTool(store, MemoryScope(user_id=USER, thread_ts=THREAD)).call(command)
    assert {name: backend.raw_read(name) for name in backend.raw_names()} == before
    assert json.loads(backend.raw_read(f"users/{USER}/preferences.json") or "")["language"]
