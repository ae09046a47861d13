"""The same listeners over Socket Mode: envelopes are acked and the person is greeted."""

from __future__ import annotations

from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack

USER, CHANNEL = "U0BOB", "D0BOB"


def test_thread_started_envelope_is_acked_and_greeted(
    socket_slack: FakeSlack, orion_socket: None
) -> None:
    server = socket_slack.socket_mode
    assert server is not None
    server.wait_connected(timeout=10)
    thread_ts = socket_slack.new_ts()
    payload = events.assistant_thread_started(USER, CHANNEL, thread_ts)
    envelope_id = server.send_events_api(payload)

    assert server.wait_ack(envelope_id)["envelope_id"] == envelope_id
    greeting = socket_slack.wait_for(
        lambda: socket_slack.bot_messages(CHANNEL, thread_ts), what="the greeting"
    )
    assert "Orion" in greeting[0].text


def test_question_over_socket_mode_is_answered(
    socket_slack: FakeSlack, claude: FakeClaude, orion_socket: None
) -> None:
    server = socket_slack.socket_mode
    assert server is not None
    server.wait_connected(timeout=10)
    thread_ts = socket_slack.new_ts()
    claude.reply("Hello from Claude over a socket.")
    ts = socket_slack.add_user_message(CHANNEL, thread_ts, USER, "hi")
    envelope_id = server.send_events_api(
        events.user_message_in_thread(USER, CHANNEL, thread_ts, "hi", ts=ts)
    )
    server.wait_ack(envelope_id)
    answer = socket_slack.wait_for(
        lambda: [m for m in socket_slack.bot_messages(CHANNEL, thread_ts) if not m.streaming]
    )
    assert answer[-1].text == "Hello from Claude over a socket."
