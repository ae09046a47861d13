"""Cold start: how soon a freshly spawned Orion answers /healthz, acks Slack, replies.

Slack retries any event not acknowledged within 3 s, and a Cloud Run instance that
scales from zero starts exactly like this. Each run spawns `python -m app.cli serve`
against loopback fakes, then posts a signed `assistant_thread_started` event as soon as
/healthz answers. The baseline is a plain import of the full stack on the same machine,
measured in the same run, so the ratio survives a noisy machine. Like for like: the Orion
under test is configured to use everything the baseline imports — memories in a GCS
bucket (the emulator) and Langfuse tracing (a fake) — as in production, with two worker
processes as deployed (a supervisor that spawns them, each importing the stack) and with
one.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from bench.stats import median_ms, print_table
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.gcs import GcsEmulator
from tests.fakes.langfuse_api import FakeLangfuse
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET

FULL_STACK = (
    "import slack_bolt.async_app, anthropic, google.cloud.storage, langfuse, starlette, uvicorn"
)


def _full_stack_import() -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", FULL_STACK], check=True)
    return time.monotonic() - started


def _one_cold_start(
    slack: FakeSlack, claude: FakeClaude, workdir: Path, production_like: dict[str, str]
) -> dict[str, float]:
    import httpx

    env = orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port(), **production_like)
    orion = OrionProcess(env, cwd=workdir, log_path=workdir / "orion.log")
    spawned = orion.start()
    try:
        healthy = orion.wait_healthy()
        thread_ts = slack.new_ts()
        body = events.json_body(events.assistant_thread_started("U0BENCH", "D0BENCH", thread_ts))
        headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
        response = httpx.post(
            f"{orion.url}/slack/events", content=body, headers=headers, timeout=10
        )
        acked = time.monotonic()
        assert response.status_code == 200, response.text
        slack.wait_for(lambda: slack.bot_messages("D0BENCH", thread_ts), timeout=30)
        replied = time.monotonic()
    finally:
        orion.stop()
    return {"healthz": healthy - spawned, "ack": acked - spawned, "reply": replied - spawned}


# As deployed (cloudbuild.yaml: HTTP_WORKERS=2: a supervisor spawns two worker processes,
# each importing the stack), and in one process.
WORKERS = (2, 1)


def run(quick: bool) -> list[tuple[str, str]]:
    runs = 3 if quick else 7
    baseline: list[float] = []
    timings: dict[int, dict[str, list[float]]] = {n: {} for n in WORKERS}
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
            baseline.append(_full_stack_import())
            for workers in WORKERS:
                configured = production_like | {"HTTP_WORKERS": str(workers)}
                result = _one_cold_start(slack, claude, Path(tmp), configured)
                for name, seconds in result.items():
                    timings[workers].setdefault(name, []).append(seconds)
    base = median_ms(baseline)
    rows = [
        (
            f"cold start: full-stack import baseline (median of {runs}; Orion configured "
            "with GCS emulator + Langfuse tracing, as the baseline imports both)",
            f"{base} ms",
        )
    ]
    for workers in WORKERS:
        label = f"cold start, {workers} worker{'s' if workers > 1 else ''}"
        healthz, ack, reply = (median_ms(timings[workers][n]) for n in ("healthz", "ack", "reply"))
        rows += [
            (f"{label}: spawn → /healthz 200", f"{healthz} ms"),
            (f"{label}: spawn → first event acked", f"{ack} ms"),
            (f"{label}: spawn → greeting posted", f"{reply} ms"),
            (f"{label}: first ack / full-stack import", f"{ack / base:.2f}×"),
        ]
    return rows


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
