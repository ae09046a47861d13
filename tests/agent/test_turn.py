"""What one turn sends Claude for a thread: Orion's instructions and memory as system
blocks, the thread as alternating turns, and the tools only when memory is on.

(How `build_messages` bounds and trims a thread is tests/agent/test_history.py; these look
at the request itself, as FakeClaude received it.)
"""

from __future__ import annotations

import json

from anthropic import AsyncAnthropic

from app.agent.history import CUT_NOTE, MAX_HISTORY_MESSAGES, ThreadMessage
from app.agent.prompt_cache import EPHEMERAL
from app.agent.prompts import INSTRUCTIONS, RECALL_GUIDE
from app.agent.request import TurnRequest
from app.agent.turn import Agent, MemorySettings
from app.learning.conversation_record import ConversationOwner
from app.learning.opening import Opening, open_event
from app.memory.homes import preferences_key
from app.storage.store import ObjectStore
from tests.agent.conftest import MODEL, RecordingSink
from tests.backends import THREAD, USER
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.claude_thinking import strip_cache_control

CHANNEL = "D0123ABCD"
MEMORY = MemorySettings(summary_model="claude-small-test")
GREETING = ThreadMessage("assistant", "Hi, I'm Orion. How can I help?")
INSTRUCTIONS_BLOCK = {"type": "text", "text": INSTRUCTIONS, "cache_control": {"type": "ephemeral"}}


def user(text: str) -> ThreadMessage:
    return ThreadMessage("user", text)


def orion(text: str) -> ThreadMessage:
    return ThreadMessage("assistant", text)


def agent(client: AsyncAnthropic, store: ObjectStore | None) -> Agent:
    return Agent(claude=client, model=MODEL, store=store, memory=MEMORY)


def turn(history: list[ThreadMessage], opening: Opening | None = None) -> TurnRequest:
    return TurnRequest(USER, CHANNEL, THREAD, history, opening=opening)


async def opened(store: ObjectStore) -> Opening:
    """What the turn reads of its owner as it begins (app/learning/opening.py)."""
    owner = ConversationOwner(USER, CHANNEL)
    return await open_event(store, owner, THREAD, budget_s=2.0, token_budget=2000)


async def test_the_thread_reaches_claude_as_alternating_turns_after_orions_instructions(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink
) -> None:
    history = [
        GREETING,
        user("Our Q3 cloud bill is 20% over plan."),
        user("Mostly the nightly batch jobs."),
        orion("Move them to spot instances first."),
        user("Draft the note to finance."),
    ]
    claude.reply("Here is the draft for finance.")

    result = await agent(claude_client, store=None).answer(turn(history), sink)

    [request] = claude.requests
    # Orion's greeting can't open the conversation; two messages in a row become one turn.
    assert request["messages"] == [
        {
            "role": "user",
            "content": "Our Q3 cloud bill is 20% over plan.\n\nMostly the nightly batch jobs.",
        },
        {"role": "assistant", "content": "Move them to spot instances first."},
        # The conversation so far: the cache breakpoint of this call.
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Draft the note to finance.", "cache_control": EPHEMERAL}
            ],
        },
    ]
    # Memory off: the cached instructions alone, and no tools at all.
    assert request["system"] == [INSTRUCTIONS_BLOCK]
    assert "tools" not in request
    assert request["model"] == MODEL
    assert sink.text == result.text == "Here is the draft for finance."


async def test_the_threads_memory_is_system_data_and_the_memory_tools_are_offered(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, store: ObjectStore
) -> None:
    await store.write(
        preferences_key(USER), json.dumps({"team": "data platform", "units": "metric"})
    )
    opening = await opened(store)
    remembered = opening.context
    assert remembered is not None and "data platform" in remembered
    claude.reply("Sure.")

    await agent(claude_client, store).answer(turn([user("How far is 5 miles?")], opening), sink)

    [request] = claude.requests
    # From the most stable part to the most volatile, each cached where it ends: the
    # instructions everyone shares, then this person's guide and this thread's memory.
    instructions, guide, memory = request["system"]
    assert instructions["text"] == INSTRUCTIONS + f"\n{RECALL_GUIDE}\n"
    assert instructions["cache_control"] == EPHEMERAL
    assert f"/memories/users/{USER}/" in guide["text"] and "cache_control" not in guide
    assert f"<remembered_context>\n{remembered}\n</remembered_context>" in memory["text"]
    assert memory["cache_control"] == EPHEMERAL
    # Remembered text is never part of the conversation itself.
    assert strip_cache_control(request["messages"]) == [
        {"role": "user", "content": [{"type": "text", "text": "How far is 5 miles?"}]}
    ]
    assert "data platform" not in json.dumps(request["messages"])
    assert [tool["name"] for tool in request["tools"]] == [
        "memory",
        "recall",
        "memory_overview",
        "forget",
    ]


async def test_a_turn_whose_memory_did_not_arrive_goes_without_memory_or_tools(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, store: ObjectStore
) -> None:
    await store.write(preferences_key(USER), json.dumps({"preferred_name": "Sam"}))
    claude.reply("Hello.")

    # No opening: storage did not say in time whose the conversation is.
    await agent(claude_client, store).answer(turn([user("Hello!")]), sink)

    [request] = claude.requests
    assert "Sam" not in json.dumps(request)
    assert "tools" not in request
    assert request["system"] == [INSTRUCTIONS_BLOCK]


async def test_a_greeted_thread_past_the_message_bound_keeps_its_opening_request_and_the_note(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink
) -> None:
    # assistant_view: Orion greets first. 42 messages: few enough that the Slack layer
    # reads the thread whole (app/slack/conversation/thread_history.py: up to 60 replies), more than
    # build_messages keeps.
    history = [GREETING, user("Help me plan the Lisbon offsite in June.")]
    for n in range(20):
        history += [orion(f"Answer {n}."), user(f"Question {n}?")]
    assert len(history) > MAX_HISTORY_MESSAGES
    claude.reply("Sure.")

    await agent(claude_client, store=None).answer(turn(history), sink)

    [request] = claude.requests
    messages = request["messages"]
    assert strip_cache_control(messages[-1]) == {
        "role": "user",
        "content": [{"type": "text", "text": "Question 19?"}],
    }
    assert messages[0]["role"] == "user"
    assert messages[0]["content"].startswith("Help me plan the Lisbon offsite in June." + CUT_NOTE)
