"""Intake under attack: what unsigned requests with 30 MiB bodies cost one Orion process.

Anyone who finds the service URL can POST to `/slack/events`. Configured: one Orion
process (`python -m app.cli serve`, as deployed: uvicorn, INFO JSON logs) on loopback
against the fake Slack and Claude, warmed up by a few genuine events. Then, in rounds,
10 requests at once from one client, each with a 30 MiB JSON body sent in 64 KiB writes
as fast as loopback takes them, and signature headers that are fresh and well formed but
wrong (an unsigned sender's best: they pass every check the headers alone allow):
- with `Content-Length`, then
- chunked (no length: the server learns the size only by reading);
- and, for scale, 10 bodies just under the 1 MiB cap (read whole, then refused on the
  signature): the most an unsigned request can make Orion hold.
Measured: the Orion process's resident memory (psutil, sampled every 5 ms) — peak growth
over the warmed-up figure — and each request's time to refusal, from its first byte to
the status line (the client stops sending when the answer comes). Goals: growth
≤ 50 MiB, every refusal within 1 s.

`uv run python -m bench.intake [--quick]` runs it alone.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psutil

from bench.stats import percentile_ms, print_table
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET
from tests.raw_http import Answer, post_until_answered

CONCURRENT = 10
LARGE = 30 * 2**20
UNDER_CAP = 2**20 - 4096
WRITE = 64 * 1024
_PADDING = b"x" * WRITE


def _body(size: int) -> Iterator[bytes]:
    """A JSON event body of `size` bytes, produced as it is sent (the client holds 64 KiB)."""
    head, tail = b'{"type": "event_callback", "padding": "', b'"}'
    yield head
    left = size - len(head) - len(tail)
    while left > 0:
        yield _PADDING[: min(WRITE, left)]
        left -= WRITE
    yield tail


def _forged_headers(size: int | None) -> dict[str, str]:
    headers = {"Content-Type": "application/json", **events.sign(b"", "not-the-signing-secret")}
    if size is not None:
        headers["Content-Length"] = str(size)
    return headers


class PeakRss:
    """The process's resident set size, sampled in a thread; `peak` since `reset()`."""

    def __init__(self, process: psutil.Process) -> None:
        self._process = process
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self.peak = 0

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, self._process.memory_info().rss)

    def reset(self) -> None:
        self.peak = self._process.memory_info().rss

    def __enter__(self) -> PeakRss:
        self.reset()
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


async def _attack(url: str, size: int, *, chunked: bool) -> list[Answer]:
    headers = _forged_headers(None if chunked else size)
    return list(
        await asyncio.gather(
            *(
                post_until_answered(url, headers, _body(size), chunked=chunked)
                for _ in range(CONCURRENT)
            )
        )
    )


def _scenario(
    url: str, rss: PeakRss, baseline: int, rounds: int, size: int, *, chunked: bool
) -> tuple[list[Answer], int]:
    """`rounds` rounds of the attack; every answer, and the peak growth over `baseline`."""
    answers: list[Answer] = []
    peak = 0
    for _ in range(rounds):
        rss.reset()
        answers += asyncio.run(_attack(url, size, chunked=chunked))
        time.sleep(0.2)  # let the last samples land
        peak = max(peak, rss.peak - baseline)
    return answers, peak


def _warm_up(orion: OrionProcess, slack: FakeSlack, process: psutil.Process) -> None:
    """Genuine thread starts and questions through the whole stack, and a few small
    refusals; then wait for readiness and a steady resident size. A fresh Orion greets
    before it has even imported the Claude SDK (tens of MiB, in the background): that
    growth is start-up, not intake."""
    import httpx

    def post(payload: dict[str, object]) -> None:
        body = events.json_body(payload)
        headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
        httpx.post(f"{orion.url}/slack/events", content=body, headers=headers, timeout=30)

    for n in range(3):
        user, thread_ts = f"U0WARM{n}", slack.new_ts()
        post(events.assistant_thread_started(user, "D0WARM", thread_ts))
        ts = slack.add_user_message("D0WARM", thread_ts, user, "hello")
        post(events.user_message_in_thread(user, "D0WARM", thread_ts, "hello", ts=ts))
        slack.wait_for(lambda t=thread_ts: len(slack.bot_messages("D0WARM", t)) >= 2, timeout=60)
    asyncio.run(_attack(f"{orion.url}/slack/events", 64 * 1024, chunked=False))
    deadline = time.monotonic() + 60
    while httpx.get(f"{orion.url}/readyz", timeout=5).status_code != 200:
        assert time.monotonic() < deadline, "Orion never became ready"
        time.sleep(0.1)
    _steady(process)


def _steady(process: psutil.Process) -> None:
    """Wait until the resident size has stayed within 256 KiB for a second."""
    deadline = time.monotonic() + 30
    last = process.memory_info().rss
    while time.monotonic() < deadline:
        time.sleep(1)
        now = process.memory_info().rss
        if abs(now - last) < 256 * 1024:
            return
        last = now


def _rows(label: str, answers: list[Answer], peak: int) -> list[tuple[str, str]]:
    seconds = [a.seconds for a in answers]
    statuses = ", ".join(f"{s}×{n}" for s, n in sorted(Counter(a.status for a in answers).items()))
    return [
        (f"{label}: peak RSS growth (goal ≤ 50 MiB)", f"{peak / 2**20:.1f} MiB"),
        (
            f"{label}: time to refusal, median / p95 / p99 / max of {len(answers)}",
            f"{percentile_ms(seconds, 50):.1f} / {percentile_ms(seconds, 95):.1f} / "
            f"{percentile_ms(seconds, 99):.1f} / {max(seconds) * 1000:.1f} ms",
        ),
        (f"{label}: answers", statuses),
    ]


def run(quick: bool) -> list[tuple[str, str]]:
    rounds = 2 if quick else 5
    with FakeSlack() as slack, FakeClaude() as claude, tempfile.TemporaryDirectory() as tmp:
        claude.reply("Hello.")
        workdir = Path(tmp)
        env = orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port())
        with OrionProcess(env, cwd=workdir, log_path=workdir / "orion.log") as orion:
            assert orion.process is not None
            process = psutil.Process(orion.process.pid)
            _warm_up(orion, slack, process)
            url = f"{orion.url}/slack/events"
            baseline = process.memory_info().rss
            with PeakRss(process) as rss:
                with_length = _scenario(url, rss, baseline, rounds, LARGE, chunked=False)
                chunked = _scenario(url, rss, baseline, rounds, LARGE, chunked=True)
                under_cap = _scenario(url, rss, baseline, rounds, UNDER_CAP, chunked=False)
            time.sleep(0.5)
            after = process.memory_info().rss
    each = f"{CONCURRENT} concurrent unsigned"
    return [
        ("intake: Orion RSS, warmed up, before the attack", f"{baseline / 2**20:.1f} MiB"),
        *_rows(f"intake, {each} 30 MiB, Content-Length, {rounds} rounds", *with_length),
        *_rows(f"intake, {each} 30 MiB, chunked, {rounds} rounds", *chunked),
        *_rows(f"intake, {each} bodies just under the 1 MiB cap, {rounds} rounds", *under_cap),
        (
            "intake: RSS growth left after all rounds",
            f"{(after - baseline) / 2**20:.1f} MiB",
        ),
        (
            "intake: median time to refusal, all 30 MiB requests",
            f"{statistics.median(a.seconds for a in with_length[0] + chunked[0]) * 1000:.1f} ms",
        ),
    ]


if __name__ == "__main__":
    print_table(run("--quick" in sys.argv))
