"""SIGTERM (what Cloud Run sends): in-flight answers finish, then Orion exits 0."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

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
