"""A fresh process never acknowledges an event it does not then answer.

Cloud Run starts instances on every deploy and scale-out, and an event can reach one the
moment it accepts a connection. Orion listens only once everything an answer needs is
built (app/http_server.py), so the first connection it accepts is already a ready one.
Each case spawns the real `orion serve` (memories in the GCS emulator, as deployed),
connects again and again until the port accepts, and at that moment sends a thread start
and the person's first message: both are acknowledged, and the person sees the greeting
and the answer. One process shows it: the port is taken before the imports but listens
only once everything is built (app/runtime/port.py, app/http_server.py), so the first
connection it accepts lands at the same moment of every start (this test ran three
processes until 2026-11-29; each cold start costs seconds of CPU).
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx

from tests.e2e import conversation
from tests.fakes import slack_events as events
from tests.fakes._waiting import PROCESS_PATIENCE_S
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET

USER, CHANNEL = "U0FERN", "D0FERN"
QUESTION = "What did we decide about the launch date?"
ANSWER = "Thursday, after the review."


def _first_connection(port: int, orion: OrionProcess) -> None:
    """Return the moment the port accepts a connection (tried every few milliseconds)."""
    deadline = time.monotonic() + PROCESS_PATIENCE_S
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        assert orion.process is not None and orion.process.poll() is None, orion.log()
        time.sleep(0.002)
    raise AssertionError(f"never accepted a connection: {orion.log()}")


def _post(url: str, payload: dict[str, object]) -> int:
    body = events.json_body(payload)
    headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
    return httpx.post(f"{url}/slack/events", content=body, headers=headers, timeout=30).status_code


def test_events_sent_the_moment_a_fresh_process_accepts_are_all_answered(
    tmp_path: Path,
    slack: FakeSlack,
    claude: FakeClaude,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
) -> None:
    port = free_port()
    env = orion_env(
        slack_url=slack.url,
        claude_url=claude.url,
        port=port,
        GCS_MEMORIES_BUCKET=gcs_bucket,
        STORAGE_EMULATOR_HOST=gcs_emulator.url,
    )
    orion = OrionProcess(env, cwd=tmp_path, log_path=tmp_path / "orion.log", fresh=True)
    thread_ts = slack.open_assistant_thread(CHANNEL)
    question_ts = slack.add_user_message(CHANNEL, thread_ts, USER, QUESTION)
    claude.reply(ANSWER)
    orion.start()
    try:
        _first_connection(port, orion)
        statuses = [
            _post(orion.url, events.assistant_thread_started(USER, CHANNEL, thread_ts)),
            _post(
                orion.url,
                events.user_message_in_thread(USER, CHANNEL, thread_ts, QUESTION, ts=question_ts),
            ),
        ]
        assert statuses == [200, 200], "both acknowledged"
        conversation.wait_for_answer(slack, CHANNEL, thread_ts, ANSWER)
    finally:
        orion.stop()
    greeting, answer = conversation.finished(slack, CHANNEL, thread_ts)
    assert greeting and answer == ANSWER
    assert "Traceback" not in orion.log()
