"""A start-up that fails heals by itself: the build is retried with back-off, and nobody
who writes meanwhile is met with silence (app/runtime/retrying_build.py, app/services.py).

End to end: the real Orion HTTP app builds its services in the background, as a fresh
process does, with a Claude client factory that fails until the test lets it succeed (a
network blip, a credential lookup timing out). The test waits on explicit signals only:
log lines, messages in the thread, the readiness endpoint's answer.
"""

from __future__ import annotations

import threading
from pathlib import Path

from anthropic import AsyncAnthropic

from app.agent.errors import GENERIC
from app.config import Settings
from app.services import build_claude_client
from tests import log_events
from tests.e2e import conversation
from tests.fakes._waiting import wait_until
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings

USER, CHANNEL = "U0IRIS", "D0IRIS"
# Text that must stay in the logs: never in the thread, never in the readiness report.
BLIP = "metadata server timed out (blip-7f3a)"


class FlakyClaudeClient:
    """A Claude client factory that fails until `heal()`; counts its calls."""

    def __init__(self) -> None:
        self.healed = threading.Event()
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, settings: Settings) -> AsyncAnthropic:
        with self._lock:
            self.calls += 1
        if not self.healed.is_set():
            raise ConnectionError(BLIP)
        return build_claude_client(settings)

    def heal(self) -> None:
        self.healed.set()


def test_a_failed_start_heals_without_a_restart_and_whoever_wrote_meanwhile_got_an_apology(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    flaky = FlakyClaudeClient()
    settings = make_settings(slack, claude, memory_dir=memory_dir)
    with OrionServer(settings, claude_factory=flaky) as orion:
        [first_failure, *_] = orion.wait_logged(log_events.SERVICES_FAILED)
        assert first_failure["severity"] == "ERROR" and first_failure["attempt"] == 1
        assert first_failure["retry_in_s"] == 0.5, "the first retry comes half a second later"

        # Meanwhile the instance is alive, says it is not ready and why, and still greets
        # (the greeting needs only Slack and the store).
        assert orion.http.get("/healthz").status_code == 200
        not_ready = orion.http.get("/readyz")
        assert not_ready.status_code == 503
        assert not_ready.json()["checks"]["services"]["last_error"] == "ConnectionError"
        assert any(r.startswith("services:") for r in not_ready.json()["reasons"])
        assert "blip-7f3a" not in not_ready.text
        thread_ts, greeting = conversation.open_thread(orion, slack, USER, CHANNEL)
        assert "Orion" in greeting

        # A message now gets an apology in its thread, at once: not silence, not the error.
        conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, "Are you up?")
        [apology] = conversation.wait_for_messages(
            slack, CHANNEL, thread_ts, 1, after_greeting=True
        )
        assert GENERIC in apology
        assert claude.requests == []

        # The blip passes: the next attempt builds the services, with no restart.
        flaky.heal()
        [ready] = orion.wait_logged(log_events.SERVICES_READY, timeout=30)
        wait_until(lambda: orion.http.get("/readyz").status_code == 200, 10, "/readyz 200")
        claude.reply("Up and running.")
        conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, "And now?")
        conversation.wait_for_answer(slack, CHANNEL, thread_ts, "Up and running.")
        assert orion.http.get("/healthz").status_code == 200

    # Each failed attempt was logged once, with its traceback, and numbered in order.
    failures = orion.logged(log_events.SERVICES_FAILED)
    assert [f["attempt"] for f in failures] == list(range(1, flaky.calls))
    assert ready["attempts"] == flaky.calls == len(failures) + 1
    for failure in failures:
        assert failure["error"] == "ConnectionError"
        assert "Traceback" in failure["exception"] and BLIP in failure["exception"]
    delays = [f["retry_in_s"] for f in failures]
    assert delays == [min(0.5 * 2**n, 30.0) for n in range(len(failures))], "backing off"
    # The event that met the failure logged its own line, without repeating the build's
    # traceback (that was logged once, with the attempt).
    [event_failure] = orion.logged(log_events.SLACK_USER_MESSAGE_FAILED)
    assert event_failure["error"] == "NotBuilt" and BLIP not in event_failure["exception"]
    for message in slack.bot_messages(CHANNEL, thread_ts):
        assert "blip-7f3a" not in message.text and "ConnectionError" not in message.text
