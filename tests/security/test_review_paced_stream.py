"""Attacker's review of the paced stream (app/slack/conversation/paced_stream.py): a Stop
that comes after Slack failed a call, or while Slack still holds the call that opens the
stream, must not leave the message Orion streamed in its streaming state (Slack would
show it as still being written until the stream expires, minutes later). Played against
the fake Slack through Orion's own Web API client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from app.slack.conversation.paced_stream import PacedStream
from app.slack.web_client import configure_web_client
from tests.fakes.slack_api import FakeSlack, Message

CHANNEL, THREAD, USER = "D0STOP", "1700000000.000200", "U0STOP"


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
async def client(fake_slack: FakeSlack) -> AsyncIterator[AsyncWebClient]:
    yield configure_web_client(AsyncWebClient(token="xoxb-stop"), base_url=fake_slack.url)


def _stream(client: AsyncWebClient, failures: list[Exception]) -> PacedStream:
    return PacedStream(
        client,
        channel=CHANNEL,
        thread_ts=THREAD,
        user_id=USER,
        team_id=None,
        on_failure=failures.append,
    )


def _message(slack: FakeSlack) -> Message:
    [message] = slack.bot_messages(CHANNEL, THREAD)
    return message


async def test_a_stop_after_slack_failed_an_append_still_ends_the_stream(
    fake_slack: FakeSlack, client: AsyncWebClient
) -> None:
    failures: list[Exception] = []
    stream = _stream(client, failures)
    fake_slack.inject_error("chat.appendStream", error="internal_error", status=200)

    stream.push("Shown. ")
    await fake_slack.wait_for_async(lambda: fake_slack.calls_to("chat.startStream"))
    stream.push("Refused by Slack.")
    await fake_slack.wait_for_async(lambda: failures)
    await stream.abandon()  # the person pressed Stop

    assert _message(fake_slack).text == "Shown. "
    assert not _message(fake_slack).streaming, "left streaming until Slack expires it"


async def test_a_stop_while_slack_holds_the_first_call_ends_the_stream_it_opens(
    fake_slack: FakeSlack, client: AsyncWebClient
) -> None:
    failures: list[Exception] = []
    stream = _stream(client, failures)
    gate = fake_slack.hold("chat.startStream")  # Slack is slow to open the stream

    stream.push("First words")
    await stream.abandon()  # the person pressed Stop: the turn does not wait for Slack
    gate.set()

    await fake_slack.wait_for_async(lambda: fake_slack.bot_messages(CHANNEL, THREAD))
    await fake_slack.wait_for_async(
        lambda: not _message(fake_slack).streaming, what="the stream Slack opened, ended"
    )
    assert _message(fake_slack).text == "First words"
    assert failures == []
