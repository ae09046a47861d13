"""Claude and Slack failing mid-conversation: the person always sees a clear ending.

Each case injects a fault through the fakes and asserts what ends up in the thread: a
short apology (never exception text), any partial answer kept and its stream closed, and
the next message answered normally.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.e2e import conversation
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings

USER, CHANNEL = "U0FRANK", "D0FRANK"
INTERNALS = ("Error", "error", "Traceback", "overloaded_error", "rate_limit", "429", "529")


def _ask(orion: OrionServer, slack: FakeSlack, thread_ts: str, text: str) -> None:
    conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, text)


def _finished(slack: FakeSlack, thread_ts: str) -> list[str]:
    return conversation.finished(slack, CHANNEL, thread_ts)


def _wait_finished(slack: FakeSlack, thread_ts: str, count: int) -> list[str]:
    return conversation.wait_for_messages(slack, CHANNEL, thread_ts, count, after_greeting=False)


CLAUDE_FAULTS: dict[str, Callable[[FakeClaude], None]] = {
    "rate_limited_429": lambda c: c.fail(429, "rate_limit_error", "Rate limited", retry_after=0.01),
    "overloaded_529": lambda c: c.fail(529, "overloaded_error", "Overloaded"),
    "server_error_500": lambda c: c.fail(500, "api_error", "Internal server error"),
    "connection_reset": lambda c: c.drop_connection(),
    "reset_mid_stream": lambda c: c.drop_connection(partial_text="Here is the first half"),
    "sse_error_mid_stream": lambda c: c.fail_mid_stream("Here is the first half"),
}


@pytest.mark.parametrize("fault", sorted(CLAUDE_FAULTS))
def test_claude_fault_ends_in_an_apology_and_the_next_message_works(
    fault: str, orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = slack.new_ts()
    CLAUDE_FAULTS[fault](claude)
    _ask(orion, slack, thread_ts, "First question")
    [ending] = _wait_finished(slack, thread_ts, 1)

    assert "Sorry" in ending
    assert not any(word in ending for word in INTERNALS), ending
    if "mid_stream" in fault:
        assert ending.startswith("Here is the first half"), "the partial answer stays visible"
    assert not [m for m in slack.bot_messages(CHANNEL, thread_ts) if m.streaming]

    claude.reply("Second answer works.")
    _ask(orion, slack, thread_ts, "Second question")
    assert _wait_finished(slack, thread_ts, 2)[-1] == "Second answer works."


def test_claude_timeout_ends_in_an_apology(
    slack: FakeSlack, claude: FakeClaude, memory_dir: object
) -> None:
    settings = make_settings(slack, claude, memory_dir=memory_dir, anthropic_timeout_s=0.5)
    with OrionServer(settings) as orion:
        thread_ts = slack.new_ts()
        claude.delay(3)
        claude.reply("Too late.")
        _ask(orion, slack, thread_ts, "Slow one")
        [ending] = _wait_finished(slack, thread_ts, 1)
    assert "Sorry" in ending and "Too late." not in ending


@pytest.mark.parametrize(
    ("method", "answer", "chunk_delay"),
    [
        ("chat.startStream", conversation.LONG_ANSWER, 0.0),
        # Written slowly enough for Orion to append while Claude still writes.
        ("chat.appendStream", conversation.LONG_ANSWER, 0.3),
        ("chat.stopStream", "Delivered after a rate limit.", 0.0),
    ],
    ids=["stream_start", "stream_append", "stream_end"],
)
def test_slack_rate_limit_on_chat_is_retried(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    method: str,
    answer: str,
    chunk_delay: float,
) -> None:
    thread_ts = slack.new_ts()
    slack.inject_error(method, error="ratelimited", status=429, retry_after=1, times=1)
    claude.reply(answer, chunk_delay=chunk_delay)
    _ask(orion, slack, thread_ts, "Hello")
    assert _wait_finished(slack, thread_ts, 1) == [answer]
    assert slack.calls_to(method)[0].error == "ratelimited"


def test_expired_stream_still_shows_the_whole_answer(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, streams_past_their_lifetime: None
) -> None:
    thread_ts = slack.new_ts()
    claude.reply(conversation.LONG_ANSWER, chunk_delay=0.05)
    _ask(orion, slack, thread_ts, "Tell me a lot")
    slack.wait_for(lambda: slack.calls_to("chat.startStream"), what="the stream to start")
    slack.expire_streams()  # what Slack does to a stream after about five minutes
    slack.wait_for(
        lambda: _finished(slack, thread_ts) == [conversation.LONG_ANSWER],
        what="the whole answer",
    )
    assert slack.calls_to("chat.update"), "the expired stream is completed with chat.update"
