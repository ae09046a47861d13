"""SIGTERM (what Cloud Run sends): in-flight answers finish, then Orion exits 0. Ctrl-C does
the same; a second signal ends the process at once; and Socket Mode stops on the first
signal even while Slack keeps it waiting."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import httpx
import pytest

from tests import log_events
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET

USER, CHANNEL = "U0ERIN", "D0ERIN"


def test_sigterm_lets_the_answer_in_flight_finish(
    tmp_path: Path, slack: FakeSlack, claude: FakeClaude
) -> None:
    env = orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port())
    orion = OrionProcess(env, cwd=tmp_path, log_path=tmp_path / "orion.log")
    with orion:
        thread_ts = slack.new_ts()
        claude.delay(1.5)  # Claude is still thinking when SIGTERM arrives
        claude.reply("Finished despite the shutdown.")
        ts = slack.add_user_message(CHANNEL, thread_ts, USER, "slow question")
        body = json.dumps(
            events.user_message_in_thread(USER, CHANNEL, thread_ts, "slow question", ts=ts)
        )
        headers = {"Content-Type": "application/json", **events.sign(body.encode(), SIGNING_SECRET)}
        assert (
            httpx.post(f"{orion.url}/slack/events", content=body, headers=headers).status_code
            == 200
        )
        slack.wait_for(lambda: claude.calls, timeout=60, what="the Claude request")
        exit_code = orion.stop()

    assert exit_code == 0, orion.log()
    answers = [m.text for m in slack.bot_messages(CHANNEL, thread_ts) if not m.streaming]
    assert answers == ["Finished despite the shutdown."]
    assert json.dumps(log_events.ORION_SHUTDOWN) in orion.log()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_serve_stops_cleanly_on_the_first_signal(
    tmp_path: Path, slack: FakeSlack, claude: FakeClaude, sig: int
) -> None:
    env = orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port())
    orion = OrionProcess(env, cwd=tmp_path, log_path=tmp_path / "orion.log")
    with orion:
        exit_code = orion.stop(sig=sig)

    assert exit_code == 0, orion.log()
    assert "Traceback" not in orion.log()
    assert json.dumps(log_events.ORION_SHUTDOWN) in orion.log()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_socket_mode_stops_on_the_first_signal_while_slack_keeps_it_waiting(
    tmp_path: Path, socket_slack: FakeSlack, claude: FakeClaude, sig: int
) -> None:
    # Slack never answers apps.connections.open: Orion cannot get past connecting.
    gate = socket_slack.hold("apps.connections.open")
    env = orion_env(
        slack_url=socket_slack.url,
        claude_url=claude.url,
        port=free_port(),
        SLACK_APP_TOKEN="xapp-1-A0TEST-0000-test",
        MEMORY_DIR=str(tmp_path / "memories"),
    )
    orion = OrionProcess(env, cwd=tmp_path, log_path=tmp_path / "orion.log", command="socket")
    try:
        orion.start()
        orion.wait_logged(log_events.ORION_SOCKET_MODE_CONNECTING)
        exit_code = orion.stop(sig=sig)
    finally:
        gate.set()

    assert exit_code == 0, orion.log()
    assert "Traceback" not in orion.log()
    assert json.dumps(log_events.ORION_SHUTDOWN) in orion.log()


def test_a_second_signal_stops_at_once(
    tmp_path: Path, slack: FakeSlack, claude: FakeClaude
) -> None:
    env = orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port())
    orion = OrionProcess(env, cwd=tmp_path, log_path=tmp_path / "orion.log")
    with orion:
        thread_ts = slack.new_ts()
        claude.delay(60)  # an answer in flight that the graceful stop would wait for
        claude.reply("Too late.")
        ts = slack.add_user_message(CHANNEL, thread_ts, USER, "slow question")
        body = json.dumps(
            events.user_message_in_thread(USER, CHANNEL, thread_ts, "slow question", ts=ts)
        )
        headers = {"Content-Type": "application/json", **events.sign(body.encode(), SIGNING_SECRET)}
        httpx.post(f"{orion.url}/slack/events", content=body, headers=headers)
        slack.wait_for(lambda: claude.calls, timeout=60, what="the Claude request")
        orion.signal(signal.SIGTERM)
        orion.wait_logged(log_events.ORION_STOPPING)
        exit_code = orion.stop(sig=signal.SIGINT)  # a person pressing Ctrl-C again

    assert exit_code == 128 + signal.SIGINT
    assert json.dumps(log_events.ORION_STOPPED_AT_ONCE) in orion.log()
    assert not [m for m in slack.bot_messages(CHANNEL, thread_ts) if m.text == "Too late."]
