"""Answers of any length arrive whole, in every path: streamed, posted without a stream,
and after a stream that breaks or expires midway.

Slack takes at most 12,000 characters of Markdown per message (the fake enforces it), so a
longer answer written without the stream is several messages: cut between Markdown blocks,
code blocks intact, the feedback buttons (and the answer's metadata, so tracing is on
here) on the last only.
"""

from __future__ import annotations

import pytest

from tests import log_events
from tests.e2e import conversation
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import MARKDOWN_TEXT_LIMIT, FakeSlack, Message
from tests.orion_server import OrionServer
from tests.span_log import SpanLog

USER, CHANNEL = "U0LONG", "D0LONG"
CODE_LINES = "".join(f"total_{n} = compute(step={n})  # keep\n" for n in range(90))
CODE = f"```python\n{CODE_LINES}```"


def _long_answer(chars: int) -> str:
    """Markdown of about `chars` characters: prose, lists and ~3,500-character code blocks."""
    blocks: list[str] = []
    n = 0
    while sum(len(b) + 2 for b in blocks) < chars:
        n += 1
        blocks.append(f"Paragraph {n}: " + " ".join(f"point{n}.{k}" for k in range(120)))
        blocks.append("\n".join(f"- item {n}.{k}" for k in range(12)))
        blocks.append(CODE.replace("keep", f"block {n}"))
    return "\n\n".join(blocks)


def _answer_messages(slack: FakeSlack, thread_ts: str, answer: str) -> list[Message]:
    """Orion's finished messages in the thread, once together they hold the whole answer."""

    def whole() -> list[Message] | None:
        messages = [m for m in slack.bot_messages(CHANNEL, thread_ts) if not m.streaming]
        return messages if len("".join(m.text for m in messages)) >= len(answer) else None

    return slack.wait_for(whole, what="the whole answer")


def _ask(orion: OrionServer, slack: FakeSlack, answer: str) -> str:
    thread_ts = slack.new_ts()
    conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, "Tell me everything")
    return thread_ts


def _assert_whole_once(messages: list[Message], answer: str) -> None:
    texts = [m.text for m in messages]
    assert "".join(texts) == answer, "every character once, in order, nothing added"
    assert all(len(t) <= MARKDOWN_TEXT_LIMIT for t in texts)
    for n in range(1, answer.count("```python") + 1):
        block = CODE.replace("keep", f"block {n}")
        assert sum(block in t for t in texts) == 1, f"code block {n} arrives intact, once"
    *earlier, last = messages
    assert any(b["type"] == "context_actions" for b in last.blocks), "feedback on the last"
    assert not any(b["type"] == "context_actions" for m in earlier for b in m.blocks)
    assert last.metadata and last.metadata["event_type"] == "orion_answer"
    assert not any(m.metadata for m in earlier)


def test_40000_characters_without_streaming_arrive_whole_across_messages(
    spans: SpanLog, orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    slack.inject_error("chat.startStream", error="not_allowed", status=200, times=None)
    answer = _long_answer(40_000)
    claude.reply(answer)
    thread_ts = _ask(orion, slack, answer)

    messages = _answer_messages(slack, thread_ts, answer)

    assert len(answer) >= 40_000 and len(messages) >= 4
    _assert_whole_once(messages, answer)
    assert orion.logged(log_events.SLACK_STREAM_FAILED)


@pytest.mark.parametrize("failure", ["append_fails", "stream_expires"])
def test_a_stream_breaking_after_5000_characters_still_shows_the_whole_answer_once(
    spans: SpanLog,
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    failure: str,
    streams_past_their_lifetime: None,
) -> None:
    answer = _long_answer(30_000)
    if failure == "append_fails":
        slack.break_streams_after(5_000)
    else:
        slack.expire_streams_after(5_000)
    # Slow enough (3 s in all) that the stream breaks while Claude still writes: Orion
    # writes to a stream at most once a second after the first words.
    claude.reply(answer, chunk_delay=0.05)
    thread_ts = _ask(orion, slack, answer)

    messages = _answer_messages(slack, thread_ts, answer)

    _assert_whole_once(messages, answer)
    assert len(messages) >= 3
    [rewrite] = slack.calls_to("chat.update")
    assert rewrite.args["ts"] == messages[0].ts, "the streamed message is rewritten in place"
    assert len(slack.bot_messages(CHANNEL, thread_ts)) == len(messages), "none left streaming"


def test_a_broken_stream_that_cannot_be_rewritten_keeps_its_text_and_the_rest_follows(
    spans: SpanLog, orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    answer = _long_answer(20_000)
    slack.break_streams_after(5_000)
    slack.inject_error("chat.update", error="internal_error", status=200, times=None)
    # Paced, so the break meets an append while Claude still writes (an answer that arrived
    # whole would end its stream with one chat.stopStream carrying the rest).
    claude.reply(answer, chunk_delay=0.05)
    thread_ts = _ask(orion, slack, answer)

    messages = _answer_messages(slack, thread_ts, answer)

    shown, *rest = [m.text for m in messages]
    assert 5_000 <= len(shown) < len(answer) and answer.startswith(shown), "kept as shown"
    # A cut inside a code block reopens it, so the rest still renders as code.
    reopened = "```python\n" if shown.count("```") % 2 else ""
    assert rest[0].startswith(reopened)
    assert "".join(rest).removeprefix(reopened) == answer[len(shown) :], "the rest, once"
    assert any(b["type"] == "context_actions" for b in messages[-1].blocks)
    assert len(slack.bot_messages(CHANNEL, thread_ts)) == len(messages), "none left streaming"
