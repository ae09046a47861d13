"""Thread-start latency: `assistant_thread_started` posted → greeting visible in Slack.

Orion runs for real (HTTP app, Bolt, services, GCS store) against loopback fakes; the
memory bucket is the GCS emulator behind a FaultyProxy that holds each memory object a
thread start reads for L = 0.5 s (the person's preferences and profile — a miss
costs a round trip too — and the organisation's context, which an instance reads once and
shares for MEMORY_GLOBAL_CONTEXT_MAX_AGE_S; a new thread has no summary to read). The
latency is injected in the proxy rather than in a wrapper around the store on purpose:
every read then still goes through the store's worker thread, google-cloud-storage and
its HTTP connection pool, so whatever would serialise the reads in production (too few
worker threads, a shared lock, a pool of one connection) shows up here. A wrapper that
sleeps in `asyncio` would run the three sleeps in parallel whatever the store does, and
measure nothing but the loader.

Loads in parallel cost about 1 × L plus Orion's own overhead; one after the other they
would cost 2–3 × L. Variants:
- no injected latency: Orion's own overhead for a thread start;
- L on each object: the parallel load (ratio to L ≈ 1, never ≈ 3);
- stalled: the profile held 5 s (the others still at L) with the default 2 s budget:
  the greeting comes at ≈ the budget, still personalised from the preferences that did
  arrive.
The time until the "Restoring your preferences..." status shows is reported too: the
person should see it at once, whatever the store's latency. Each run waits for the thread
start to finish (suggested prompts set), and in the stalled variant for the stalled read
to end, so runs never overlap. The first thread start after the server starts (building
the services) is measured separately and not in any median.

`uv run python -m bench.thread_start [--quick]`
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from dataclasses import dataclass
from urllib.parse import quote

from app.memory.homes import person, preferences_key
from bench.environment import benchmark_environment
from bench.stats import median_ms, percentile_ms, print_table
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings

USER, CHANNEL = "U0BENCHTS", "D0BENCHTS"
PREFERENCES = {"response_style": "short answers", "timezone": "Europe/Berlin"}
GLOBAL_CONTEXT = "Kestrel Labs ships on Thursdays. The staging cluster is called heron.\n" * 20

LATENCY_S = 0.5  # L: per-object store latency
STALL_S = 5.0
STALLED_BUDGET_S = 2.0
POLL_S = 0.002
# google-cloud-storage sends object names percent-encoded: this matches the raw path only.
STALLED_MATCH = quote(person(USER).profile_key, safe="")


@dataclass(frozen=True)
class ThreadStart:
    seconds: float  # event posted → greeting visible
    status_seconds: float  # event posted → "Restoring your preferences..." visible
    personalised: bool


def _start_thread(orion: OrionServer, slack: FakeSlack, *, timeout: float = 30.0) -> ThreadStart:
    """Post the event, poll Slack until the greeting is there, then let the listener finish."""
    thread_ts = slack.open_assistant_thread(CHANNEL)
    payload = events.assistant_thread_started(USER, CHANNEL, thread_ts)
    started = time.perf_counter()
    response = orion.post_event(payload)
    if response.status_code != 200:
        raise RuntimeError(f"event not acknowledged: {response.status_code}")
    deadline = started + timeout
    status_at = None
    while not (greeting := slack.bot_messages(CHANNEL, thread_ts)):
        if status_at is None and slack.statuses(CHANNEL, thread_ts):
            status_at = time.perf_counter()
        if time.perf_counter() > deadline:
            raise TimeoutError("no greeting")
        time.sleep(POLL_S)
    greeted_at = time.perf_counter()
    if status_at is None:
        status_at = greeted_at  # the status came and went between two polls
    slack.wait_for(lambda: slack.suggested_prompts(CHANNEL, thread_ts), timeout=timeout)
    return ThreadStart(
        greeted_at - started, status_at - started, "short answers" in greeting[0].text
    )


def _slow_objects(proxy: FaultyProxy) -> None:
    """Every memory object read at thread start takes L (found or not)."""
    for match in ("global/context.md", person(USER).prefix):  # preferences, profile
        proxy.add_rule(match, delay=LATENCY_S, method="GET")


def _seconds(results: list[ThreadStart]) -> list[float]:
    return [r.seconds for r in results]


def run(quick: bool) -> list[tuple[str, str]]:
    runs = 3 if quick else 20
    stalled_runs = 1 if quick else 5
    with (
        GcsEmulator() as emulator,
        FaultyProxy(emulator.url) as proxy,
        benchmark_environment(proxy.url),
        FakeSlack() as slack,
        FakeClaude() as claude,
    ):
        bucket = f"orion-bench-{uuid.uuid4().hex[:12]}"
        emulator.create_bucket(bucket)
        emulator.write(bucket, preferences_key(USER), json.dumps(PREFERENCES))
        emulator.write(bucket, "global/context.md", GLOBAL_CONTEXT)

        # The default budget (2 s): sequential reads would still fit in it and show.
        settings = make_settings(slack, claude, gcs_memories_bucket=bucket)
        with OrionServer(settings) as orion:
            first = _start_thread(orion, slack, timeout=60)
            baseline = [_start_thread(orion, slack) for _ in range(runs)]
            _slow_objects(proxy)
            slow = [_start_thread(orion, slack) for _ in range(runs)]
            proxy.clear_rules()

        stalled_settings = make_settings(
            slack, claude, gcs_memories_bucket=bucket, memory_load_timeout_s=STALLED_BUDGET_S
        )
        with OrionServer(stalled_settings) as orion:
            _start_thread(orion, slack, timeout=60)  # warm: services and GCS client built
            stalled = []
            for _ in range(stalled_runs):
                # The stall first (the first matching rule wins), matching the raw
                # percent-encoded name so the proxy's log tells it apart from the L rule;
                # once: the GCS client's own retry after its request timeout is not stalled.
                stall = proxy.add_rule(STALLED_MATCH, delay=STALL_S, times=1, method="GET")
                _slow_objects(proxy)
                stalled.append(_start_thread(orion, slack))
                # Let the stalled read (and the client's retry) end before the next run, so
                # that runs never share the store's worker threads.
                slack.wait_for(lambda: _answered(proxy, STALLED_MATCH), timeout=STALL_S * 3)
                time.sleep(LATENCY_S + 0.5)
                assert stall.hits == 1
                proxy.clear_rules()

    median_slow = median_ms(_seconds(slow)) / 1000
    median_base = median_ms(_seconds(baseline)) / 1000
    median_stalled = median_ms(_seconds(stalled)) / 1000
    return [
        (
            "thread start: first after server start (builds services), no injected latency",
            f"{first.seconds * 1000:.1f} ms ({_greeting_kind(first)})",
        ),
        (f"thread start: no injected latency, median of {runs}", f"{median_base * 1000:.1f} ms"),
        (
            f"thread start: L = {LATENCY_S:g} s per object, median of {runs}",
            f"{median_slow * 1000:.1f} ms",
        ),
        (
            f"thread start: L = {LATENCY_S:g} s per object, status line visible, median",
            f"{median_ms([r.status_seconds for r in slow])} ms",
        ),
        (
            f"thread start: L = {LATENCY_S:g} s per object, p90 / max",
            f"{percentile_ms(_seconds(slow), 90)} / {max(_seconds(slow)) * 1000:.1f} ms",
        ),
        (
            "thread start: median / L (parallel ≈ 1, sequential ≥ 2)",
            f"{median_slow / LATENCY_S:.2f}×",
        ),
        (
            f"thread start: L = {LATENCY_S:g} s, overhead over L (median − L)",
            f"{(median_slow - LATENCY_S) * 1000:.1f} ms",
        ),
        (
            f"thread start: personalised greetings with L = {LATENCY_S:g} s",
            f"{sum(r.personalised for r in slow)}/{len(slow)}",
        ),
        (
            f"thread start: the profile stalled {STALL_S:g} s, "
            f"budget {STALLED_BUDGET_S:g} s, median of {stalled_runs}",
            f"{median_stalled * 1000:.1f} ms",
        ),
        ("thread start: stalled median / budget", f"{median_stalled / STALLED_BUDGET_S:.2f}×"),
        (
            "thread start: personalised greetings with a stalled object",
            f"{sum(r.personalised for r in stalled)}/{len(stalled)}",
        ),
    ]


def _greeting_kind(result: ThreadStart) -> str:
    return "personalised" if result.personalised else "generic greeting"


def _answered(proxy: FaultyProxy, match: str) -> bool:
    return any(request.rule == match for request in proxy.requests[-20:])


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
