"""What a person can see of their memory: the inventory, its document, and Claude's tools
for "what do you remember about me?" and "forget that"."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from anthropic.tools import ToolError

from app.learning.memory_document import render_memory
from app.learning.memory_inventory import take_inventory
from app.learning.memory_tools import ForgetTool, MemoryOverviewTool
from app.learning.preference_detection import detect_preferences
from app.learning.preferences import save_preferences
from app.memory.homes import person, preferences_key
from app.memory.scopes import MemoryScope
from app.storage.store import ObjectStore
from tests.backends import OTHER_THREAD, OTHER_USER, THREAD, USER, Backend
from tests.layout import conversation, profile

DM = "D0123ABCD"
LEARNED = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
NOTE = "Q3 budget: the travel line is over by 12%.\nAsk Dana on Friday.\nThird.\nFourth.\n"
HOME = person(USER)
NOTE_KEY = f"{HOME.memory_prefix}notes/budget.md"


async def _seed(store: ObjectStore) -> None:
    found = detect_preferences("Please answer in French.")
    await save_preferences(store, USER, found, channel=DM, thread_ts=THREAD, now=LEARNED)
    await store.write(NOTE_KEY, NOTE)
    await store.write(
        HOME.conversation_key(THREAD),
        conversation(USER, THREAD, channel_id=DM, summary="We compared travel costs.", at=LEARNED),
    )
    await store.write(
        HOME.profile_key, profile(conversations=[(THREAD, "Q3 budget review")], channel_id=DM)
    )
    # Someone else's conversation, listed where this person (through Claude) can write and
    # claimed as theirs: never shown as theirs.
    theirs = person(OTHER_USER).conversation_key(OTHER_THREAD)
    await store.write(
        theirs, conversation(OTHER_USER, OTHER_THREAD, summary="Another person's words.")
    )
    forged = [{"thread": OTHER_THREAD, "title": "Secret plans", "channel": DM}]
    await store.write(f"{HOME.memory_prefix}sessions.json", json.dumps(forged))


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


async def test_a_listed_conversation_that_is_gone_is_not_shown(store: ObjectStore) -> None:
    await _seed(store)
    # Their profile lists a thread whose conversation is not in their home (expired, or
    # a thread of someone else's): nothing of it is shown, nor counted.
    await store.write(
        HOME.profile_key,
        profile(
            conversations=[(THREAD, "Q3 budget review"), (OTHER_THREAD, "Secret plans")],
            channel_id=DM,
        ),
    )

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
    assert "French" not in (backend.raw_read(preferences_key(USER)) or "")
    note = f"/memories/users/{USER}/notes/budget.md"
    await forget.call({"kind": "note", "id": note})
    assert backend.raw_read(NOTE_KEY) is None
    await forget.call({"kind": "conversation", "id": THREAD})
    assert backend.raw_read(HOME.conversation_key(THREAD)) is None


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
    await store.write(f"{person(OTHER_USER).memory_prefix}notes.md", "theirs\n")
    theirs = person(OTHER_USER).conversation_key("1712345999.999999")
    await store.write(theirs, conversation(OTHER_USER, "1712345999.999999", summary="Not yours."))
    before = {name: backend.raw_read(name) for name in backend.raw_names()}
    with pytest.raises(ToolError):
        await ForgetTool(store, MemoryScope(user_id=USER, thread_ts=THREAD)).call(command)
    assert {name: backend.raw_read(name) for name in backend.raw_names()} == before
    assert json.loads(backend.raw_read(preferences_key(USER)) or "")["language"]
