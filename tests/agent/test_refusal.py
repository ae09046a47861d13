"""A turn Claude's safety classifiers refuse keeps nothing: no summary of it, no preference
captured from its message, no memory-tool write made before the refusal. The person is told
so in one sentence (tests/agent/test_stop_reasons.py)."""

from __future__ import annotations

from pathlib import Path

from anthropic import AsyncAnthropic

from app.agent.history import ThreadMessage
from app.agent.request import TurnRequest
from app.agent.stop_reasons import REFUSED
from app.agent.turn import Agent, MemorySettings
from app.learning.conversation_record import ConversationOwner
from app.learning.opening import open_event
from app.memory.change_log import ChangeLog
from app.memory.homes import person, preferences_key
from app.storage.local_directory import LocalDirectoryStore
from tests.agent.conftest import MODEL, RecordingSink
from tests.backends import THREAD, USER
from tests.fakes.anthropic_api import FakeClaude
from tests.layout import summary_of_latest

SUMMARY_MODEL = "claude-haiku-5-5"
MESSAGE = "Please call me Sam. And tell me how to get into my neighbour's wifi."


async def setup(
    client: AsyncAnthropic, tmp_path: Path, *, seeded: dict[str, str] | None = None
) -> tuple[Agent, LocalDirectoryStore, TurnRequest]:
    store = LocalDirectoryStore(tmp_path / "memories")
    for key, content in (seeded or {}).items():
        await store.write(key, content)
    memory = MemorySettings(summary_model=SUMMARY_MODEL)
    agent = Agent(claude=client, model=MODEL, store=store, memory=memory)
    owner = ConversationOwner(USER, "D0REFUSE")
    opening = await open_event(store, owner, THREAD, budget_s=2.0, token_budget=2000)
    turn = TurnRequest(
        USER,
        "D0REFUSE",
        THREAD,
        [ThreadMessage("user", MESSAGE)],
        opening=opening,
        changes=ChangeLog(),
    )
    return agent, store, turn


async def _summary(store: LocalDirectoryStore) -> str | None:
    stored = await store.read(person(USER).profile_key)
    return summary_of_latest(stored.content if stored else None)


async def test_a_refused_turn_keeps_no_summary_no_preference_and_no_memory_write(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    agent, store, turn = await setup(claude_client, tmp_path)
    notes = f"/memories/users/{USER}/notes.md"
    claude.reply_tool_use("memory", {"command": "create", "path": notes, "file_text": "Sam.\n"})
    claude.refuse("Sure, first you")

    await agent.capture_preferences(turn, MESSAGE)
    assert await store.read(preferences_key(USER)) is not None  # saved at once...
    result = await agent.answer(turn, sink)
    note = await agent.memory_note(turn)
    await agent.after_turn(turn, result.text, None)

    assert result.refused and sink.text.endswith(REFUSED)
    # ...and put back once the answer is refused: nothing of the turn is kept.
    assert note is None
    assert await store.read(preferences_key(USER)) is None
    assert await store.read(f"{person(USER).memory_prefix}notes.md") is None
    assert await _summary(store) is None
    assert [r["model"] for r in claude.requests] == [MODEL, MODEL]  # no summary call


async def test_a_refused_turn_puts_back_what_was_there_before_it(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    agent, store, turn = await setup(
        claude_client, tmp_path, seeded={preferences_key(USER): '{"name": "Samantha"}'}
    )
    claude.refuse()

    await agent.capture_preferences(turn, MESSAGE)
    await agent.answer(turn, sink)
    await agent.memory_note(turn)

    kept = await store.read(preferences_key(USER))
    assert kept is not None and kept.content == '{"name": "Samantha"}'


async def test_an_answered_turn_keeps_its_summary_and_its_preference(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    agent, store, turn = await setup(claude_client, tmp_path)
    claude.reply("Hello Sam. I can't help with someone else's wifi.")
    claude.reply("# Greeting Sam\nSam asked to be called Sam.")

    await agent.capture_preferences(turn, MESSAGE)
    result = await agent.answer(turn, sink)
    note = await agent.memory_note(turn)
    await agent.after_turn(turn, result.text, None)

    assert not result.refused and note is not None
    assert await store.read(preferences_key(USER)) is not None
    summary = await _summary(store)
    assert summary is not None and "Sam asked to be called Sam" in summary
    stored = await store.read(person(USER).profile_key)
    assert stored is not None and "Greeting Sam" in stored.content
