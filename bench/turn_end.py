"""Turn end: does the after-turn step (the session summary) delay the reply a person sees?

Orion runs in-process over HTTP (as in the end-to-end tests) against the fake Slack and
Claude, with memories in the GCS emulator. Each sample opens a fresh assistant thread,
posts a message with enough substance to be summarised, and times from posting the
signed event to the finished answer in the fake Slack. Configurations:

- memory off (`MEMORY_ENABLED=false`): no memory at all, the baseline;
- memory on, summary model instant;
- memory on, summary model slow (answers after 3 s): also timed, reply → summary written,
  and a second message sent the moment the first reply shows, while that slow summary is
  still running.

Run alone with `uv run python -m bench.turn_end [--quick]`.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from app.learning.profile import Profile
from app.learning.welcome import welcome_of
from app.memory.homes import person
from bench.environment import benchmark_environment
from bench.stats import median_ms, percentile_ms, print_table
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.claude_script import ScriptItem, text
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings

USER, CHANNEL = "U0BENCH02", "D0BENCH02"
SLOW_SUMMARY_S = 3.0
QUESTION = (
    "Can you compare our Q2 and Q3 cloud spend by region and tell me where the overrun "
    "comes from? Finance wants an answer by Friday."
)
ANSWER = (
    "Most of the Q3 overrun comes from europe-west1: nightly batch jobs doubled in July. "
    "Moving them to spot instances would bring spend back under plan."
)
SUMMARY = "# Q3 cloud spend\nThe Q3 overrun is batch jobs in europe-west1; spot instances."


class _Bench:
    def __init__(self, slack: FakeSlack, claude: FakeClaude, emulator: GcsEmulator) -> None:
        self.slack, self.claude, self.emulator = slack, claude, emulator

    @contextmanager
    def orion(self, *, summary_delay: float, **overrides: Any) -> Iterator[OrionServer]:
        bucket = f"orion-bench-{uuid.uuid4().hex[:12]}"
        self.emulator.create_bucket(bucket)
        settings = make_settings(self.slack, self.claude, gcs_memories_bucket=bucket, **overrides)

        def respond(body: dict[str, Any]) -> ScriptItem | None:
            if body["model"] == settings.summary_model:
                return text(SUMMARY, delay=summary_delay)
            return text(ANSWER)

        self.claude.responder = respond
        with OrionServer(settings) as server:
            self._warm_up(server)
            yield server

    def _warm_up(self, orion: OrionServer) -> None:
        # The first event builds the services (seconds of imports): not what is measured.
        thread_ts = self.open_thread(orion)
        self.post_and_wait(orion, thread_ts)

    def open_thread(self, orion: OrionServer) -> str:
        thread_ts = self.slack.open_assistant_thread(CHANNEL)
        orion.post_event(events.assistant_thread_started(USER, CHANNEL, thread_ts))
        self.slack.wait_for(lambda: self.slack.bot_messages(CHANNEL, thread_ts), timeout=30)
        return thread_ts

    def post_and_wait(self, orion: OrionServer, thread_ts: str) -> float:
        """Seconds from posting the message to its finished answer in the thread."""
        answered = len(self._answers(thread_ts))
        ts = self.slack.add_user_message(CHANNEL, thread_ts, USER, QUESTION)
        event = events.user_message_in_thread(USER, CHANNEL, thread_ts, QUESTION, ts=ts)
        started = time.perf_counter()
        orion.post_event(event)
        self.slack.wait_for(lambda: len(self._answers(thread_ts)) > answered, timeout=30)
        return time.perf_counter() - started

    def wait_summary(self, orion: OrionServer, thread_ts: str) -> float:
        """Seconds until the thread's summary is in the bucket (the person's profile holds
        the newest, until the conversation's next turn)."""
        bucket = orion.settings.gcs_memories_bucket
        assert bucket is not None

        def summarised() -> bool:
            stored = self.emulator.read(bucket, person(USER).profile_key)
            welcome = welcome_of(Profile.parse(stored.decode() if stored else None))
            return welcome is not None and welcome.thread_ts == thread_ts and bool(welcome.summary)

        started = time.perf_counter()
        self.slack.wait_for(summarised, timeout=30)
        return time.perf_counter() - started

    def _answers(self, thread_ts: str) -> list[str]:
        return [m.text for m in self.slack.bot_messages(CHANNEL, thread_ts)[1:] if not m.streaming]


def run(quick: bool) -> list[tuple[str, str]]:
    samples = 5 if quick else 15
    slow_samples = 3 if quick else 7
    off, instant, slow, summary_lag, overlapped = [], [], [], [], []
    with (
        FakeSlack() as slack,
        FakeClaude() as claude,
        GcsEmulator() as emulator,
        benchmark_environment(emulator.url),
    ):
        bench = _Bench(slack, claude, emulator)
        with bench.orion(summary_delay=0.0, memory_enabled=False) as orion:
            off = [bench.post_and_wait(orion, bench.open_thread(orion)) for _ in range(samples)]
        with bench.orion(summary_delay=0.0) as orion:
            for _ in range(samples):
                thread_ts = bench.open_thread(orion)
                instant.append(bench.post_and_wait(orion, thread_ts))
                bench.wait_summary(orion, thread_ts)
        with bench.orion(summary_delay=SLOW_SUMMARY_S) as orion:
            for _ in range(slow_samples):
                thread_ts = bench.open_thread(orion)
                slow.append(bench.post_and_wait(orion, thread_ts))
                summary_lag.append(bench.wait_summary(orion, thread_ts))
            for _ in range(slow_samples):
                thread_ts = bench.open_thread(orion)
                bench.post_and_wait(orion, thread_ts)
                # The first turn's 3 s summary is running now; ask again at once.
                overlapped.append(bench.post_and_wait(orion, thread_ts))
            time.sleep(SLOW_SUMMARY_S + 0.5)  # let the last summaries finish before shutdown

    def row(label: str, seconds: list[float]) -> tuple[str, str]:
        return (
            f"turn end: {label}, median / p90 ms (n={len(seconds)})",
            f"{median_ms(seconds)} / {percentile_ms(seconds, 90)}",
        )

    return [
        row("message → reply, memory off", off),
        row("message → reply, memory on, summary instant", instant),
        row(f"message → reply, memory on, summary {SLOW_SUMMARY_S:.0f} s", slow),
        row(f"reply → summary written, summary {SLOW_SUMMARY_S:.0f} s", summary_lag),
        row(f"next message → reply during a {SLOW_SUMMARY_S:.0f} s summary", overlapped),
    ]


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
