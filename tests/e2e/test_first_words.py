"""The first words of an answer show while Claude is still writing it, in both Slack
experiences, on a conversation's first turn and on a later one where Claude first looks
something up with the memory tool. Claude (the fake) writes at a model's pace: a few
characters a delta, with pauses between them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import both_experiences
from tests.e2e.conversation import finished, opening_words
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.claude_script import ScriptItem, text, tool_use
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings

# Each test runs in both experiences (the fake Slack speaks the one under test).
experience = both_experiences.experience
slack = both_experiences.slack

USER, CHANNEL = "U0FIRST", "D0FIRST"
FIRST = "How do we deploy the billing service?"
SECOND = "Check what you remember about me, then tell me more."
ANSWER = " ".join(f"step{n}" for n in range(60))  # ~420 characters
DELTA_CHARS, PAUSE_S = 24, 0.12  # 18 deltas over 2 s


@pytest.fixture
def orion(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path, experience: str
) -> Iterator[OrionServer]:

    settings = make_settings(slack, claude, memory_dir=memory_dir, slack_experience=experience)

    def respond(body: dict[str, Any]) -> ScriptItem | None:
        if body["model"] != settings.anthropic_model:
            return text("A short summary.")  # the turn's summary, in the background
        last = body["messages"][-1]["content"]
        looked_up = isinstance(last, list) and any(b["type"] == "tool_result" for b in last)
        if last_user_text(body) == SECOND and not looked_up:
            return tool_use("memory", {"command": "view", "path": f"/memories/users/{USER}"})
        return text(ANSWER, chunk_delay=PAUSE_S, delta_chars=DELTA_CHARS)

    claude.responder = respond
    with OrionServer(settings) as server:
        yield server


def _ask(orion: OrionServer, slack: FakeSlack, thread_ts: str | None, question: str) -> str:
    """The person writes; returns the conversation's thread."""
    ts = slack.add_user_message(CHANNEL, thread_ts, USER, question)
    if thread_ts is None:
        payload = events.top_level_dm(USER, CHANNEL, question, ts=ts)
    else:
        payload = events.user_message_in_thread(USER, CHANNEL, thread_ts, question, ts=ts)
    assert orion.post_event(payload).status_code == 200
    return thread_ts or ts


def _shows_first_words_while_claude_writes(
    slack: FakeSlack, thread_ts: str, answers_before: int
) -> None:
    def partly_shown() -> list[str]:
        answers = slack.bot_messages(CHANNEL, thread_ts)[answers_before:]
        return [m.text for m in answers if m.streaming and m.text]

    [shown] = slack.wait_for(partly_shown, timeout=30, what="the first words, still streaming")
    assert ANSWER.startswith(shown) and len(shown) < len(ANSWER)
    slack.wait_for(
        lambda: len(finished(slack, CHANNEL, thread_ts)) > answers_before, what="the answer"
    )
    assert finished(slack, CHANNEL, thread_ts)[-1] == ANSWER


def test_first_words_show_while_claude_writes_also_after_a_memory_lookup(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, experience: str
) -> None:
    thread_ts = None
    greeting = 0
    if experience == "assistant":
        thread_ts = slack.open_assistant_thread(CHANNEL)
        orion.post_event(events.assistant_thread_started(USER, CHANNEL, thread_ts))
        slack.wait_for(lambda: slack.bot_messages(CHANNEL, thread_ts), timeout=30)
        greeting = 1

    thread_ts = _ask(orion, slack, thread_ts, FIRST)
    _shows_first_words_while_claude_writes(slack, thread_ts, greeting)

    _ask(orion, slack, thread_ts, SECOND)
    _shows_first_words_while_claude_writes(slack, thread_ts, greeting + 1)

    # The second answer came after Claude looked in the memory.
    looked_up = [r for r in claude.requests if last_user_text(r) == SECOND]
    assert len(looked_up) == 2 and looked_up[1]["messages"][-1]["content"][0]["type"] == (
        "tool_result"
    )
    # Each answer was opened with its first words, not held for a buffer (a 400-character
    # one would hold all but the last deltas of this answer).
    opened = opening_words(slack)
    assert len(opened) == 2
    assert all(ANSWER.startswith(words) and len(words) < len(ANSWER) // 2 for words in opened)
