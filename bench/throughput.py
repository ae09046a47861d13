"""Throughput and footprint of one Orion process against instant loopback fakes.

- ack latency: 100 signed events posted at once; each request's time to its HTTP 200.
- per-turn CPU: Orion's own CPU time (user + system, from the OS) per answered message;
  waiting on Claude, Slack and storage costs no CPU, so this is Orion's overhead.
- memory: resident set size after start-up and after many turns; growth per turn.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from bench.stats import median_ms, percentile_ms, print_table
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET

CHANNEL = "D0LOAD"


def _new_messages(slack: FakeSlack, count: int) -> list[dict]:
    """`count` signed user messages, each in its own thread (and in the fake workspace)."""
    requests = []
    for n in range(count):
        user, thread_ts = f"U0LOAD{n % 50:03d}", slack.new_ts()
        text = f"question number {n}: what is on my calendar today?"
        ts = slack.add_user_message(CHANNEL, thread_ts, user, text)
        body = events.json_body(
            events.user_message_in_thread(user, CHANNEL, thread_ts, text, ts=ts)
        )
        headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
        requests.append({"body": body.decode(), "headers": headers})
    return requests


def _answered(slack: FakeSlack) -> int:
    return sum(1 for m in slack.messages(CHANNEL) if m.is_bot and not m.streaming)


def _drive(url: str, slack: FakeSlack, count: int, batch: int) -> list[float]:
    """Post `count` messages, `batch` at a time, from a separate load process; wait for
    every answer; return the ack latencies."""
    before, latencies = _answered(slack), []
    for start in range(0, count, batch):
        spec = {
            "url": f"{url}/slack/events",
            "health_url": f"{url}/healthz",
            "requests": _new_messages(slack, min(batch, count - start)),
        }
        done = subprocess.run(
            [sys.executable, "-m", "bench.load_client"],
            input=json.dumps(spec),
            stdout=subprocess.PIPE,
            text=True,
            check=True,
        )
        latencies.extend(json.loads(done.stdout))
    slack.wait_for(lambda: _answered(slack) >= before + count, timeout=300, what="all answers")
    return latencies


def run(quick: bool) -> list[tuple[str, str]]:
    turns = 100 if quick else 1000
    with (
        FakeSlack() as slack,
        FakeClaude() as claude,
        tempfile.TemporaryDirectory() as tmp,
    ):
        env = orion_env(
            slack_url=slack.url, claude_url=claude.url, port=free_port(), LOG_LEVEL="WARNING"
        )
        orion = OrionProcess(env, cwd=Path(tmp), log_path=Path(tmp) / "orion.log")
        with orion:
            assert orion.process is not None
            proc = psutil.Process(orion.process.pid)
            _drive(orion.url, slack, 20, 5)  # warm-up: imports, clients, connection pools
            time.sleep(1)  # let after-turn work finish
            rss_start = proc.memory_info().rss

            ack = _drive(orion.url, slack, 100, 100)

            cpu_before = sum(proc.cpu_times()[:2])
            _drive(orion.url, slack, turns, 50)
            time.sleep(1)
            cpu_per_turn = (sum(proc.cpu_times()[:2]) - cpu_before) / turns
            rss_end = proc.memory_info().rss
        apologies = sum("Sorry" in m.text for m in slack.messages(CHANNEL) if m.is_bot)
    growth_kib = (rss_end - rss_start) / 1024
    return [
        ("ack latency, 100 concurrent events: p50", f"{median_ms(ack)} ms"),
        ("ack latency, 100 concurrent events: p99", f"{percentile_ms(ack, 99)} ms"),
        (
            f"Orion CPU per turn (over {turns} turns, incl. summary)",
            f"{cpu_per_turn * 1000:.1f} ms",
        ),
        ("turns that ended in an apology (must be 0)", str(apologies)),
        ("resident memory after warm-up", f"{rss_start / 2**20:.1f} MiB"),
        (f"resident memory after {turns} more turns", f"{rss_end / 2**20:.1f} MiB"),
        ("memory growth per turn", f"{growth_kib / (turns + 100):.2f} KiB"),
    ]


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
