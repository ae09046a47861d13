"""The session summary's Claude call against FakeClaude answering as Haiku 5.5: thinking can
never leave it without text, and a reply with no summary is asked for again, then reported."""

from __future__ import annotations

import pytest
from anthropic import AsyncAnthropic
from structlog.testing import capture_logs

from app.agent.history import ThreadMessage
from app.agent.summarizer import MAX_SUMMARY_TOKENS, ClaudeSummarizer, EmptySummary
from app.agent.thinking import Thinking
from tests.fakes.anthropic_api import FakeClaude

HAIKU = "claude-haiku-5-5"
MESSAGES = [
    ThreadMessage("user", "Our Q3 cloud bill is 20% over plan."),
    ThreadMessage("assistant", "Move the nightly batch jobs to spot instances first."),
]
SUMMARY = "# Q3 cloud costs\nThe bill is 20% over plan; batch jobs go to spot instances."


def summarizer(client: AsyncAnthropic, thinking: Thinking | None = None) -> ClaudeSummarizer:
    extra = {"thinking": thinking} if thinking else {}
    return ClaudeSummarizer(client, model=HAIKU, timeout_s=5.0, **extra)


async def test_the_summary_call_runs_with_thinking_off_so_its_budget_is_all_summary(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    claude.reply(SUMMARY)

    draft = await summarizer(claude_client)(None, MESSAGES)

    assert draft.title == "Q3 cloud costs" and "spot instances" in draft.body
    [request] = claude.requests
    assert request["thinking"] == {"type": "disabled"}
    assert request["output_config"] == {"effort": "low"}
    assert request["max_tokens"] == MAX_SUMMARY_TOKENS


async def test_a_reply_that_thinking_left_empty_is_asked_again_without_thinking(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    claude.reply_stopped("", "max_tokens")  # the budget spent thinking
    claude.reply(SUMMARY)

    with capture_logs() as logs:
        draft = await summarizer(claude_client, Thinking("adaptive", "low"))(None, MESSAGES)

    assert draft.title == "Q3 cloud costs"
    first, second = claude.requests
    assert first["thinking"]["type"] == "adaptive" and first["max_tokens"] > MAX_SUMMARY_TOKENS
    assert second["thinking"] == {"type": "disabled"}
    [empty] = [line for line in logs if line["event"] == "memory.summary.empty"]
    assert empty["stop_reason"] == "max_tokens"


async def test_a_summary_empty_twice_fails_saying_why_instead_of_passing_for_one(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    claude.reply_stopped("", "max_tokens")
    claude.reply_stopped("Welcome: Hi again\nNext: go on", "end_turn")  # no summary in it

    with pytest.raises(EmptySummary, match="stop_reason end_turn"):
        await summarizer(claude_client)(None, MESSAGES)
    assert len(claude.requests) == 2
