"""A mention reads its thread once, bounded (issue 44): long channel threads were read
whole on every mention — in `answers` channels, where Orion keeps no transcript, every
mention — spending the workspace's shared `conversations.replies` rate limit.

Now a mention reads at most a few pages from the thread's start and a page of its newest
messages (MAX_FORWARD_PAGES + MAX_TAIL_READS calls of at most REPLIES_PAGE_SIZE), and
Claude still gets the opening, the newest messages and a note that the middle was left
out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from app.agent.history import CUT_NOTE
from app.slack.conversation.thread_history import (
    MAX_FORWARD_PAGES,
    MAX_TAIL_READS,
    REPLIES_PAGE_SIZE,
)
from tests.e2e.channels import (
    ADMIN,
    ANA,
    BEN,
    PUBLIC,
    command,
    mention,
    say,
    set_up_channels,
    wait_for_answer,
)
from tests.e2e.conversation import main_requests
from tests.fakes.anthropic_api import FakeClaude, message_text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_model import format_ts
from tests.orion_server import OrionServer

OPENING = "Incident review: the payments outage of Monday, step by step."
REPLIES = 3_000


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], slack: FakeSlack) -> OrionServer:
    set_up_channels(slack)
    return orion_on_bucket()


def replies_calls(slack: FakeSlack) -> list[dict[str, Any]]:
    return [c.args for c in slack.calls_to("conversations.replies")]


def long_thread(slack: FakeSlack) -> str:
    """A reply a second over the last hour: written in a loop, the replies' times would
    follow the machine's load, and a pause among the newest hides them from a page of
    their time (thread_history.py finds them by the pace seen)."""
    start = time.time_ns() // 1_000 - (REPLIES + 60) * 1_000_000
    root = slack.add_user_message(PUBLIC, None, ANA, OPENING, ts=format_ts(start))
    for n in range(1, REPLIES + 1):
        ts = format_ts(start + n * 1_000_000)
        slack.add_user_message(PUBLIC, root, BEN, f"Finding {n}: log line {n} checked.", ts=ts)
    return root


def ask(orion: OrionServer, slack: FakeSlack, claude: FakeClaude, thread_ts: str, text: str) -> str:
    """Ben mentions Orion in the thread; what Claude was sent, as text."""
    claude.reply(f"Answered: {text}")
    mention(orion, slack, BEN, PUBLIC, text, thread_ts=thread_ts)
    wait_for_answer(slack, PUBLIC, thread_ts, f"Answered: {text}")
    orion.wait_idle()
    return "\n\n".join(message_text(m) for m in main_requests(claude, orion)[-1]["messages"])


def test_every_mention_in_a_long_answers_only_thread_reads_a_few_pages_not_the_thread(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    command(orion, slack, ADMIN, PUBLIC, "workspace answers")  # no transcript is kept
    thread_ts = long_thread(slack)

    for question in ("what went wrong first?", "and what was found last?"):
        before = len(replies_calls(slack))
        sent = ask(orion, slack, claude, thread_ts, question)
        calls = replies_calls(slack)[before:]

        assert len(calls) <= MAX_FORWARD_PAGES + MAX_TAIL_READS, f"{len(calls)} reads"
        assert all(int(c["limit"]) <= REPLIES_PAGE_SIZE for c in calls)
        assert sent.startswith(f"<@{ANA}> wrote:\n> {OPENING}") and CUT_NOTE in sent
        assert f"Finding {REPLIES}: log line {REPLIES} checked." in sent, "the newest"
        assert "Finding 1500:" not in sent, "not the middle"


def test_a_mention_with_a_transcript_reads_only_what_was_said_since_in_one_page(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = long_thread(slack)
    ask(orion, slack, claude, thread_ts, "summarise the findings")
    for n in range(1, 6):
        say(slack, ANA, PUBLIC, thread_ts, f"Follow-up {n}: fixed.")

    before = len(replies_calls(slack))
    sent = ask(orion, slack, claude, thread_ts, "anything new?")

    [read] = replies_calls(slack)[before:]
    assert read.get("oldest"), "from the transcript's newest message on"
    for n in range(1, 6):
        assert f"<@{ANA}> wrote:\n> Follow-up {n}: fixed." in sent
