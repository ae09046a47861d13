"""Throughput and footprint of one Orion process against instant loopback fakes.

- ack latency: 100 signed events posted at once, several times; each request's time to
  its HTTP 200, with p50 and p99 per burst.
- per-turn CPU: Orion's own CPU time (user + system, from the OS) per answered message,
  per batch of 50; waiting on Claude, Slack and storage costs no CPU. Logging is at INFO,
  as deployed. Memories are in a local directory, then (fewer batches) in the GCS
  emulator, as deployed. Every message opens a new thread, so every turn also restores
  the person's memories: the most storage work a turn does.
- the Claude baseline: each batch's Claude calls replayed by the SDK alone, right after
  Orion answered them (bench/claude_baseline.py); Orion's own CPU per turn is the median
  over batches of process minus baseline, each pair measured moments apart.
- memory: resident set size after warm-up and the bursts, half-way through the next 1000
  turns and at their end; the growth per turn in each half shows whether it levels off.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from bench.stats import percentile_ms, print_table
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET

CHANNEL = "D0LOAD"
TURNS_PER_BATCH = 50


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
    # Counted without copying the workspace: polled every 10 ms while Orion works, a copy
    # of thousands of messages kept the other core busy, which slows Orion's own CPU.
    return slack.finished_bot_messages(CHANNEL)


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
        latencies.extend(_in_own_process("bench.load_client", spec))
    slack.wait_for(lambda: _answered(slack) >= before + count, timeout=300, what="all answers")
    return latencies


def run(quick: bool) -> list[tuple[str, str]]:
    bursts, batches, gcs_batches = (3, 4, 2) if quick else (9, 20, 6)
    with (
        FakeSlack() as slack,
        FakeClaude() as claude,
        GcsEmulator() as emulator,
        tempfile.TemporaryDirectory() as tmp,
    ):
        with (
            ClaudeBaseline(claude) as baseline,  # first: it imports while Orion warms up
            _orion(slack, claude, Path(tmp) / "local") as (orion, proc),
        ):
            p50s, p99s = [], []
            for _ in range(bursts):
                ack = _drive(orion.url, slack, 100, 100)
                p50s.append(percentile_ms(ack, 50))
                p99s.append(percentile_ms(ack, 99))
                _settle(proc)
            rss = [proc.memory_info().rss]
            cpu_ms, claude_cpu_ms = [], []
            for _ in range(batches):
                first_request = len(claude.requests)
                cpu_ms.append(_cpu_ms_per_turn(orion, proc, slack))
                rss.append(proc.memory_info().rss)
                if not claude_cpu_ms:
                    baseline.replay_since(first_request)  # warm-up: connections, lazy imports
                claude_cpu_ms.append(baseline.replay_since(first_request))

        emulator.create_bucket("orion-bench")
        gcs = {"GCS_MEMORIES_BUCKET": "orion-bench", **emulator.env()}
        with _orion(slack, claude, Path(tmp) / "gcs", **gcs) as (orion, proc):
            gcs_cpu_ms = [_cpu_ms_per_turn(orion, proc, slack) for _ in range(gcs_batches)]
        apologies = sum("Sorry" in m.text for m in slack.messages(CHANNEL) if m.is_bot)
    turns = batches * TURNS_PER_BATCH
    half = len(rss) // 2
    own_ms = [total - sdk for total, sdk in zip(cpu_ms, claude_cpu_ms, strict=True)]
    return [
        (
            f"ack latency, 100 concurrent events: p50, median of {bursts} bursts",
            f"{statistics.median(p50s):.1f} ms",
        ),
        (
            f"ack latency, 100 concurrent events: p99, median (min–max) of {bursts} bursts",
            f"{statistics.median(p99s):.1f} ms ({min(p99s):.1f}–{max(p99s):.1f})",
        ),
        (
            # The headline: production keeps memories in GCS.
            f"Orion process CPU per turn, memories in GCS (emulator), as deployed, "
            f"median (min–max) of {gcs_batches} batches of 50",
            f"{statistics.median(gcs_cpu_ms):.1f} ms ({min(gcs_cpu_ms):.1f}–{max(gcs_cpu_ms):.1f})",
        ),
        (
            f"Orion process CPU per turn, memories in a local directory (development), "
            f"median (min–max) of {batches} batches of 50",
            f"{statistics.median(cpu_ms):.1f} ms ({min(cpu_ms):.1f}–{max(cpu_ms):.1f})",
        ),
        (
            "  of which the Claude SDK alone, same 2 calls (baseline), median",
            f"{statistics.median(claude_cpu_ms):.1f} ms",
        ),
        (
            "Orion's own CPU per turn, local directory (process − baseline, per batch), "
            "median (min–max)",
            f"{statistics.median(own_ms):.1f} ms ({min(own_ms):.1f}–{max(own_ms):.1f})",
        ),
        ("turns that ended in an apology (must be 0)", str(apologies)),
        ("resident memory after warm-up and the ack bursts", _mib(rss[0])),
        (
            f"resident memory after {turns // 2} / {turns} more turns",
            f"{_mib(rss[half])} / {_mib(rss[-1])}",
        ),
        (
            "memory growth per turn: first half / second half",
            f"{_kib_per_turn(rss[0], rss[half], half)} / "
            f"{_kib_per_turn(rss[half], rss[-1], len(rss) - 1 - half)}",
        ),
    ]


@contextmanager
def _orion(
    slack: FakeSlack, claude: FakeClaude, cwd: Path, **env: str
) -> Iterator[tuple[OrionProcess, psutil.Process]]:
    """An Orion process, warmed up: imports done, clients built, connection pools full."""
    cwd.mkdir()
    port = free_port()
    config = orion_env(slack_url=slack.url, claude_url=claude.url, port=port, **env)
    orion = OrionProcess(config, cwd=cwd, log_path=cwd / "orion.log")
    with orion:
        assert orion.process is not None
        proc = psutil.Process(orion.process.pid)
        _drive(orion.url, slack, 100, TURNS_PER_BATCH)
        _settle(proc)
        yield orion, proc


def _cpu_ms_per_turn(orion: OrionProcess, proc: psutil.Process, slack: FakeSlack) -> float:
    """One batch of turns, all at once; the process's CPU time per turn, in ms."""
    cpu_before = sum(proc.cpu_times()[:2])
    _drive(orion.url, slack, TURNS_PER_BATCH, TURNS_PER_BATCH)
    _settle(proc)
    return (sum(proc.cpu_times()[:2]) - cpu_before) * 1000 / TURNS_PER_BATCH


class ClaudeBaseline:
    """bench/claude_baseline.py, running beside Orion: replays batches on request."""

    def __init__(self, claude: FakeClaude) -> None:
        self._claude = claude
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> ClaudeBaseline:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "bench.claude_baseline"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._send({"claude_url": self._claude.url})
        return self

    def __exit__(self, *_: object) -> None:
        assert self._process is not None and self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(timeout=30)

    def replay_since(self, first_request: int) -> float:
        """Replay the turns whose Claude requests came from `first_request` on (each turn:
        its streamed answer, then its summary); returns the SDK's CPU ms per turn."""
        bodies = self._claude.requests[first_request:]
        answers = [b for b in bodies if b.get("stream")]
        summaries = [b for b in bodies if not b.get("stream")]
        self._send([list(pair) for pair in zip(answers, summaries, strict=True)])
        assert self._process is not None and self._process.stdout is not None
        return float(json.loads(self._process.stdout.readline())) * 1000

    def _send(self, document: Any) -> None:
        assert self._process is not None and self._process.stdin is not None
        self._process.stdin.write(json.dumps(document) + "\n")
        self._process.stdin.flush()


def _in_own_process(module: str, spec: dict[str, Any]) -> Any:
    """Run a helper module in a separate process: `spec` in as JSON, its result out."""
    done = subprocess.run(
        [sys.executable, "-m", module],
        input=json.dumps(spec),
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def _settle(proc: psutil.Process) -> None:
    """Wait until Orion is idle: the after-turn work (summaries) of the turns just answered
    runs in the background, and must not be counted in the next figure."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        before = sum(proc.cpu_times()[:2])
        time.sleep(0.25)
        if sum(proc.cpu_times()[:2]) - before < 0.0125:  # under 5% of a core
            return


def _mib(rss: int) -> str:
    return f"{rss / 2**20:.1f} MiB"


def _kib_per_turn(before: int, after: int, batches: int) -> str:
    return f"{(after - before) / 1024 / (batches * TURNS_PER_BATCH):.2f} KiB"


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
