"""Every way Claude's answer can stop, as FakeClaude returns it through the real SDK client:
what was written stays, and the person is told in one line what happened and what to do."""

from __future__ import annotations

import typing

import pytest
from anthropic import AsyncAnthropic
from anthropic.types import StopReason
from structlog.testing import capture_logs

from app.agent import stop_reasons
from app.agent.loop import LoopResult, run_agent_loop
from app.agent.stop_reasons import CONTEXT_FULL, CUT_SHORT, NO_ANSWER, REFUSED
from app.agent.tool_registry import ToolRegistry
from tests.agent.conftest import MODEL, RecordingSink
from tests.fakes.anthropic_api import FakeClaude

QUESTION = [{"role": "user", "content": "Write me the full migration plan."}]


async def answer(client: AsyncAnthropic, sink: RecordingSink) -> LoopResult:
    return await run_agent_loop(
        client,
        model=MODEL,
        system=[{"type": "text", "text": "You are Orion."}],
        messages=QUESTION,
        tools=ToolRegistry(),
        sink=sink,
    )


def test_every_stop_reason_the_sdk_lists_has_an_outcome() -> None:
    # Fails when an SDK upgrade adds a reason: give it an outcome in app/agent/stop_reasons.py.
    listed = typing.get_args(StopReason)
    assert [reason for reason in listed if not stop_reasons.known(reason)] == []


async def test_an_answer_cut_short_by_max_tokens_keeps_its_text_and_says_how_to_continue(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink
) -> None:
    claude.reply_stopped("Step 1: freeze writes. Step 2: copy the", "max_tokens")

    result = await answer(claude_client, sink)

    assert sink.text == f"Step 1: freeze writes. Step 2: copy the\n\n{CUT_SHORT}"
    assert result.text == sink.text
    assert "continue" in CUT_SHORT and result.stop_reason == "max_tokens"


async def test_a_refusal_ends_with_one_honest_sentence_after_what_was_shown(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink
) -> None:
    claude.refuse("Here is how to", category="cyber")

    with capture_logs() as logs:
        result = await answer(claude_client, sink)

    assert sink.text == f"Here is how to\n\n{REFUSED}"
    assert result.refused and result.stop_reason == "refusal"
    # Logged with its category only: nothing of the conversation.
    [refusal] = [line for line in logs if line["event"] == "agent.refusal"]
    assert refusal["category"] == "cyber" and "Here is how" not in str(refusal)


async def test_a_refusal_before_any_text_still_tells_the_person(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink
) -> None:
    claude.refuse()

    result = await answer(claude_client, sink)

    assert sink.text == result.text == REFUSED


async def test_pause_turn_sends_the_turn_back_and_claude_goes_on_where_it_paused(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink
) -> None:
    claude.reply_stopped("First, the inventory; ", "pause_turn")
    claude.reply("then the cut-over.")

    result = await answer(claude_client, sink)

    assert sink.text == result.text == "First, the inventory; then the cut-over."
    assert (result.iterations, result.stop_reason) == (2, "end_turn")
    paused = claude.requests[1]["messages"][-1]
    assert paused["role"] == "assistant"
    assert paused["content"][0]["text"] == "First, the inventory; "


async def test_a_conversation_too_long_for_the_model_says_to_start_a_new_one(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink
) -> None:
    claude.reply_stopped("The plan has", "model_context_window_exceeded")

    result = await answer(claude_client, sink)

    assert sink.text == result.text == f"The plan has\n\n{CONTEXT_FULL}"


async def test_a_stop_sequence_ends_the_answer_as_written(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink
) -> None:
    claude.reply_stopped("Done.", "stop_sequence")

    result = await answer(claude_client, sink)

    assert sink.text == result.text == "Done."


async def test_an_answer_with_no_text_at_all_gets_a_line_instead_of_silence(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink
) -> None:
    claude.reply_stopped("", "end_turn")

    result = await answer(claude_client, sink)

    assert sink.text == result.text == NO_ANSWER


@pytest.mark.parametrize("reason", ["compaction", "a_reason_from_the_future"])
async def test_a_stop_reason_newer_than_orion_is_logged_and_the_answer_stands(
    reason: str, claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink
) -> None:
    claude.reply_stopped("Here is the plan.", reason)

    with capture_logs() as logs:
        result = await answer(claude_client, sink)

    assert sink.text == result.text == "Here is the plan."
    assert {"event": "agent.stop_reason.unknown", "stop_reason": reason} in [
        {k: line[k] for k in ("event", "stop_reason") if k in line} for line in logs
    ]
