"""Fresh processes: how soon a spawned Orion is ready, and whether it loses any event.

A Cloud Run instance starts like this on every deploy and scale-out. Each run spawns
`python -m app.cli serve` against loopback fakes, configured as in production (memories in
a GCS bucket — the emulator — and Langfuse tracing — a fake — so that it imports and
builds everything production does), then, at the first moment it accepts a connection,
posts a signed thread start and a first message. An event is lost when Orion
acknowledged it (HTTP 200) and the person never saw the greeting or the answer. The
baseline is `import anthropic` alone on the same machine, in the same run (its import is
most of a start; the goal is ready within it + 1.5 s).

`uv run python -m bench.cold_start [--quick]`
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

from bench.stats import median_ms, print_table
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.gcs import GcsEmulator
from tests.fakes.langfuse_api import FakeLangfuse
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET

PROCESSES, QUICK_PROCESSES = 20, 5
USER, CHANNEL = "U0COLD", "D0COLD"
QUESTION = "What did we decide about the launch date?"
ANSWER = "Thursday, after the review."
TIMEOUT_S = 60.0


def _anthropic_import() -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", "import anthropic"], check=True)
    return time.monotonic() - started


def _first_connection(port: int, orion: OrionProcess) -> float:
    """Poll until the port accepts a connection (every 5 ms); when it first did."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return time.monotonic()
        if orion.process is not None and orion.process.poll() is not None:
            raise RuntimeError(f"Orion exited: {orion.log()[-2000:]}")
        time.sleep(0.005)
    raise TimeoutError("Orion never accepted a connection")


def _post(url: str, payload: dict[str, object]) -> int:
    body = events.json_body(payload)
    headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
    return httpx.post(f"{url}/slack/events", content=body, headers=headers, timeout=10).status_code


def _one_fresh_process(
    slack: FakeSlack, claude: FakeClaude, workdir: Path, production_like: dict[str, str]
) -> tuple[float, bool, int]:
    """(spawn → first connection accepted, /readyz 200 right after it, events acknowledged
    and lost)."""
    port = free_port()
    env = orion_env(slack_url=slack.url, claude_url=claude.url, port=port, **production_like)
    orion = OrionProcess(env, cwd=workdir, log_path=workdir / f"orion-{port}.log")
    spawned = orion.start()
    lost = 0
    try:
        accepting = _first_connection(port, orion)
        thread_ts = slack.open_assistant_thread(CHANNEL)
        acked = [_post(orion.url, events.assistant_thread_started(USER, CHANNEL, thread_ts))]
        ready = httpx.get(f"{orion.url}/readyz", timeout=5).status_code == 200
        claude.reply(ANSWER)
        ts = slack.add_user_message(CHANNEL, thread_ts, USER, QUESTION)
        message = events.user_message_in_thread(USER, CHANNEL, thread_ts, QUESTION, ts=ts)
        acked.append(_post(orion.url, message))
        try:
            slack.wait_for(
                lambda: [m for m in slack.bot_messages(CHANNEL, thread_ts) if m.text == ANSWER],
                timeout=TIMEOUT_S,
            )
        except TimeoutError:
            greeted = bool(slack.bot_messages(CHANNEL, thread_ts))
            lost = (acked[0] == 200 and not greeted) + (acked[1] == 200)
    finally:
        orion.stop()
    return accepting - spawned, ready, lost


def run(quick: bool) -> list[tuple[str, str]]:
    runs = QUICK_PROCESSES if quick else PROCESSES
    baseline: list[float] = []
    accepting: list[float] = []
    ready = lost = 0
    with (
        FakeSlack() as slack,
        FakeClaude() as claude,
        GcsEmulator() as emulator,
        FakeLangfuse() as langfuse,
        tempfile.TemporaryDirectory() as tmp,
    ):
        bucket = f"orion-cold-{uuid.uuid4().hex[:12]}"
        emulator.create_bucket(bucket)
        production_like = {
            "GCS_MEMORIES_BUCKET": bucket,
            "STORAGE_EMULATOR_HOST": emulator.url,
            "LANGFUSE_PUBLIC_KEY": "pk-lf-bench",
            "LANGFUSE_SECRET_KEY": "sk-lf-bench",
            "LANGFUSE_BASE_URL": langfuse.url,
        }
        for _ in range(runs):
            baseline.append(_anthropic_import())
            first, up, gone = _one_fresh_process(slack, claude, Path(tmp), production_like)
            accepting.append(first)
            ready += up
            lost += gone
    base, to_ready = median_ms(baseline), median_ms(accepting)
    label = f"fresh processes ({runs}; GCS emulator + Langfuse tracing configured, as deployed)"
    return [
        (
            f"{label}: events acknowledged and never answered (a thread start and a message "
            "at the first connection each accepts; goal 0)",
            f"{lost} of {2 * runs}",
        ),
        (
            f"{label}: spawn → ready (the first connection it accepts), median; /readyz "
            "200 right after it",
            f"{to_ready} ms; {ready} of {runs}",
        ),
        (f"{label}: `import anthropic` alone, median (baseline)", f"{base} ms"),
        (f"{label}: ready − anthropic import (goal ≤ 1500 ms)", f"{to_ready - base:.0f} ms"),
    ]


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
