"""An answer's stream against the fake Slack, through the real AsyncWebClient: the first
words go out at once, later text is coalesced into few calls (one in flight at a time, each
within Slack's 12,000 characters), and whatever Slack does — answer slowly, rate limit,
fail — the text arrives whole and in order, or the failure is reported once."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from slack_sdk.models.messages.chunk import TaskUpdateChunk
from slack_sdk.web.async_client import AsyncWebClient

from app.slack.conversation.paced_stream import MAX_MARKDOWN_CHARS, PacedStream
from app.slack.conversation.task_display import CHUNKS_REFUSED, CHUNKS_REFUSED_THIS_ANSWER
from app.slack.web_client import configure_web_client
from tests.fakes.slack_api import FakeSlack, Message

CHANNEL, THREAD, USER = "D0PACE", "1700000000.000100", "U0PACE"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
async def client(slack: FakeSlack) -> AsyncIterator[AsyncWebClient]:
    # Orion's own client: its retry handlers honour Retry-After.
    yield configure_web_client(AsyncWebClient(token="xoxb-pace"), base_url=slack.url)


class Failures(list[Exception]):
    def __call__(self, exc: Exception) -> None:
        self.append(exc)


def _stream(
    client: AsyncWebClient,
    failures: Failures,
    *,
    refusals: list[str | None] | None = None,
) -> PacedStream:
    """A stream in the test's thread; `refusals`: with tasks allowed, and each refusal of
    the task display noted there."""
    return PacedStream(
        client,
        channel=CHANNEL,
        thread_ts=THREAD,
        user_id=USER,
        team_id=None,
        on_failure=failures,
        tasks_allowed=refusals is not None,
        on_tasks_refused=refusals.append if refusals is not None else None,
    )


def _message(slack: FakeSlack) -> Message:
    [message] = slack.bot_messages(CHANNEL, THREAD)
    return message


async def test_the_first_words_go_out_alone_and_the_rest_in_few_calls(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    failures = Failures()
    stream = _stream(client, failures)
    pieces = [f"piece {n}, " for n in range(200)]

    stream.push("Hello")
    [started] = await slack.wait_for_async(lambda: slack.calls_to("chat.startStream"))
    for piece in pieces:
        stream.push(piece)
    assert await stream.close(blocks=None, metadata=None)

    assert started.args["markdown_text"] == "Hello", "sent without waiting for more"
    assert _message(slack).text == "Hello" + "".join(pieces)
    assert not _message(slack).streaming
    assert len(slack.calls_to("chat.appendStream")) <= 1, "200 deltas, coalesced"
    assert failures == []


async def test_whitespace_alone_opens_nothing_and_leaves_with_the_next_words(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    stream = _stream(client, Failures())

    stream.push("\n\n")
    await asyncio.sleep(0.05)
    assert slack.calls == [], "no stream opened for a blank line"
    stream.push("The answer.")
    assert await stream.close(blocks=None, metadata=None)

    [started] = slack.calls_to("chat.startStream")
    assert started.args["markdown_text"] == "\n\nThe answer."
    assert _message(slack).text == "\n\nThe answer."


async def test_a_slow_slack_gets_one_call_at_a_time_carrying_all_that_arrived(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    stream = _stream(client, Failures())
    stream.push("First words. ")
    await slack.wait_for_async(lambda: slack.calls_to("chat.startStream"))
    gate = slack.hold("chat.appendStream")  # Slack takes its time answering appends

    pieces = [f"word{n} " for n in range(300)]
    for piece in pieces[:100]:
        stream.push(piece)
    await slack.wait_for_async(lambda: slack.held("chat.appendStream"), what="an append waiting")
    for piece in pieces[100:]:
        stream.push(piece)  # never waits for Slack
    closing = asyncio.create_task(stream.close(blocks=None, metadata=None))
    await asyncio.sleep(0.05)
    assert not closing.done(), "the end waits for the call in flight"
    gate.set()
    assert await closing

    assert _message(slack).text == "First words. " + "".join(pieces), "whole, in order"
    assert 1 <= len(slack.calls_to("chat.appendStream")) <= 2, "none queued behind another"


async def test_a_rate_limited_append_is_retried_after_retry_after_and_loses_nothing(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    failures = Failures()
    stream = _stream(client, failures)
    slack.inject_error("chat.appendStream", error="ratelimited", status=429, retry_after=1)

    stream.push("One. ")
    await slack.wait_for_async(lambda: slack.calls_to("chat.startStream"))
    stream.push("Two. ")
    await slack.wait_for_async(lambda: slack.calls_to("chat.appendStream"))
    stream.push("Three.")  # arrives while the append waits out Retry-After
    assert await stream.close(blocks=None, metadata=None)

    assert _message(slack).text == "One. Two. Three."
    assert [c.error for c in slack.calls_to("chat.appendStream")] == ["ratelimited", None]
    assert failures == []


async def test_slack_failing_mid_stream_is_reported_once_and_nothing_more_is_sent(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    failures = Failures()
    stream = _stream(client, failures)
    slack.inject_error("chat.appendStream", error="internal_error", status=200, times=None)

    stream.push("Shown. ")
    await slack.wait_for_async(lambda: slack.calls_to("chat.startStream"))
    stream.push("Never shown.")
    await slack.wait_for_async(lambda: slack.calls_to("chat.appendStream"))
    stream.push(" Nor this.")

    assert not await stream.close(blocks=None, metadata=None), "the caller writes it whole"
    assert [type(f).__name__ for f in failures] == ["SlackApiError"]
    assert len(slack.calls_to("chat.appendStream")) == 1
    assert slack.calls_to("chat.stopStream") == []
    assert stream.shown == len("Shown. ")


async def test_text_beyond_one_calls_limit_goes_in_several_calls(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    stream = _stream(client, Failures())
    answer = "".join(f"Sentence {n} of a very long answer. " for n in range(1_200))  # ~40,000

    for start in range(0, len(answer), 500):
        stream.push(answer[start : start + 500])
    assert await stream.close(blocks=None, metadata=None)

    assert len(answer) >= 40_000 and _message(slack).text == answer
    writes = [c for c in slack.calls if c.method.endswith("Stream")]
    assert len(writes) >= 4
    assert all(c.error is None for c in slack.calls)  # the fake refuses more than 12,000
    assert all(len(c.args.get("markdown_text") or "") <= MAX_MARKDOWN_CHARS for c in writes)


def _task(task_id: str, status: str) -> TaskUpdateChunk:
    return TaskUpdateChunk(id=task_id, title=f"Task {task_id}", status=status)


async def test_a_task_may_open_the_stream_and_the_first_words_still_go_next_without_waiting(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    stream = _stream(client, Failures(), refusals=[])
    stream.push_task(_task("restore", "in_progress"))
    [opened] = await slack.wait_for_async(lambda: slack.calls_to("chat.startStream"))
    stream.push_task(_task("restore", "complete"))
    stream.push("First words")
    # The very next call carries the words, whatever the interval since the start said.
    [first] = await slack.wait_for_async(lambda: slack.calls_to("chat.appendStream"))
    for n in range(50):  # fifty updates of five tasks while the interval runs
        stream.push_task(_task(f"t{n % 5}", "in_progress" if n < 45 else "complete"))
    stream.push(" and the rest.")
    assert await stream.close(blocks=None, metadata=None)

    assert opened.args["task_display_mode"] == "plan"
    assert [c["type"] for c in opened.args["chunks"]] == ["plan_update", "task_update"]
    assert [c.get("text") for c in first.args["chunks"] if c["type"] == "markdown_text"] == [
        "First words"
    ]
    message = _message(slack)
    assert message.text == "First words and the rest."
    tasks = {task.id: task for task in slack.tasks(CHANNEL, THREAD)}
    assert list(tasks) == ["restore", "t0", "t1", "t2", "t3", "t4"]
    assert all(task.status == "complete" for task in tasks.values())
    # Each task's updates coalesced: one per call at most, five calls in all.
    assert len(slack.calls) <= 5
    for call in slack.calls:
        ids = [c["id"] for c in call.args.get("chunks") or [] if c["type"] == "task_update"]
        assert len(ids) == len(set(ids))


async def test_chunks_refused_by_the_workspace_are_dropped_and_the_text_still_streams(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    slack.refuse_task_display("not_supported")
    refusals: list[str | None] = []
    stream = _stream(client, Failures(), refusals=refusals)
    stream.push_task(_task("restore", "in_progress"))
    stream.push("Hello")
    await slack.wait_for_async(lambda: [c for c in slack.calls if c.error is None])
    assert not stream.shows_tasks
    stream.push_task(_task("restore", "complete"))  # not sent: the display is off
    stream.push(", world.")
    assert await stream.close(blocks=None, metadata=None)

    assert refusals == ["not_supported"]
    assert _message(slack).text == "Hello, world."
    assert slack.tasks(CHANNEL, THREAD) == []
    assert [c.error for c in slack.calls] == ["not_supported", None, None]


def test_the_agent_display_doc_lists_exactly_the_errors_that_turn_the_display_off() -> None:
    doc = (Path(__file__).parents[3] / "docs" / "agent-display.md").read_text()
    listed = re.search(r"as a workspace without the display would\s*\(([^)]*)\)", doc)
    assert listed is not None, "docs/agent-display.md no longer lists the errors"
    assert set(re.findall(r"`(\w+)`", listed.group(1))) == CHUNKS_REFUSED
    assert not CHUNKS_REFUSED & CHUNKS_REFUSED_THIS_ANSWER
    assert all(f"`{error}`" in doc for error in CHUNKS_REFUSED_THIS_ANSWER)


async def test_a_malformed_call_drops_this_answers_tasks_but_does_not_refuse_the_workspace(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    """`invalid_arguments` is Slack's answer to any bad call: the text still streams, but
    one bad call must not turn the display off for the whole workspace until restart."""
    slack.refuse_task_display("invalid_arguments")
    refusals: list[str | None] = []
    stream = _stream(client, Failures(), refusals=refusals)
    stream.push_task(_task("restore", "in_progress"))
    stream.push("Hello")
    await slack.wait_for_async(lambda: [c for c in slack.calls if c.error is None])
    stream.push_task(_task("restore", "complete"))
    stream.push(", world.")
    assert await stream.close(blocks=None, metadata=None)

    assert refusals == [], "the workspace is not remembered as refusing the display"
    assert _message(slack).text == "Hello, world."
    assert [c.error for c in slack.calls] == ["invalid_arguments", None, None]
