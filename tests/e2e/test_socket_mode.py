"""The same listeners over Socket Mode: envelopes are acked and the person is greeted; an
app token Slack refuses, or a Slack out of reach, stops Orion with one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.config import EXIT_UNAVAILABLE
from tests import log_events
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import free_port, orion_env, run_orion_command

USER, CHANNEL = "U0BOB", "D0BOB"
APP_TOKEN = "xapp-1-A0TEST-0000-mistyped"


def test_thread_started_envelope_is_acked_and_greeted(
    socket_slack: FakeSlack, orion_socket: None
) -> None:
    server = socket_slack.socket_mode
    assert server is not None
    server.wait_connected()
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
    server.wait_connected()
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


@pytest.mark.parametrize("refusal", ["invalid_auth", "not_allowed_token_type"])
def test_a_refused_app_token_is_one_line_and_an_exit(
    tmp_path: Path, socket_slack: FakeSlack, claude: FakeClaude, refusal: str
) -> None:
    # A mistyped token, or another kind of token pasted where the app-level one goes.
    socket_slack.inject_error("apps.connections.open", refusal, status=200, times=None)
    env = orion_env(
        slack_url=socket_slack.url,
        claude_url=claude.url,
        port=free_port(),
        SLACK_APP_TOKEN=APP_TOKEN,
        MEMORY_DIR=str(tmp_path / "memories"),
    )

    result = run_orion_command(tmp_path, "socket", env=env)

    assert result.returncode == 2
    shown = [line for line in result.stderr.splitlines() if not line.startswith("{")]
    assert shown == [
        f"Orion cannot start — SLACK_APP_TOKEN: Slack refused it ({refusal}); it must be an "
        "app-level token with connections:write, from the app's Basic Information page"
    ]
    assert "Traceback" not in result.stdout + result.stderr
    assert APP_TOKEN not in result.stdout + result.stderr
    # Asked once: no retry loop.
    assert len(socket_slack.calls_to("apps.connections.open")) == 1


def test_slack_out_of_reach_at_start_is_one_line_and_exit_69(
    tmp_path: Path, claude: FakeClaude
) -> None:
    # As in HTTP mode (tests/e2e/test_readiness.py): no endless retries, no traceback.
    nowhere = f"http://127.0.0.1:{free_port()}/api/"
    env = orion_env(
        slack_url=nowhere,
        claude_url=claude.url,
        port=free_port(),
        SLACK_APP_TOKEN=APP_TOKEN,
        MEMORY_DIR=str(tmp_path / "memories"),
    )

    result = run_orion_command(tmp_path, "socket", env=env)

    assert result.returncode == EXIT_UNAVAILABLE
    shown = [line for line in result.stderr.splitlines() if not line.startswith("{")]
    assert shown == [
        f"Orion cannot start — Slack's Web API at {nowhere} did not answer (ClientConnectorError)"
    ]
    assert "Traceback" not in result.stderr
    assert log_events.ORION_SOCKET_MODE_CONNECTED not in result.stdout + result.stderr
