"""Memory tool latency against the GCS emulator: `view` and `create` through ScopedMemoryTool.

Each command goes the whole way a model's tool call goes: input validation, scope check,
span and log line, the store's worker thread, google-cloud-storage, HTTP to a local
fake-gcs-server. Loopback hides network latency, so these figures are Orion's own
overhead per command; in Cloud Run add one (view) or two (create: list + upload) GCS
round trips. Run alone with `uv run python -m bench.memory_latency [--quick]`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable

from app.memory.scopes import MemoryScope
from app.memory.tool.model_paths import ModelPathStore
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.storage.gcs import GcsObjectStore
from bench.environment import benchmark_environment
from bench.stats import median_ms, percentile_ms, print_table
from tests.fakes.gcs import GcsEmulator

USER, THREAD = "U0BENCH01", "1712345678.000100"


async def _timed(calls: list[Callable[[], Awaitable[object]]]) -> list[float]:
    durations = []
    for call in calls:
        started = time.perf_counter()
        await call()
        durations.append(time.perf_counter() - started)
    return durations


# First use as a fresh Cloud Run instance meets it: a new interpreter that has imported
# nothing yet, timing the store's import and its client's construction (and one read).
_FIRST_USE = """
import asyncio, json, sys, time
started = time.perf_counter()
from app.storage.gcs import GcsObjectStore
store = GcsObjectStore(sys.argv[1])
asyncio.run(store.connect())
connected = time.perf_counter()
asyncio.run(store.read("people/U0BENCH01/memory/absent.md"))
print(json.dumps({"connect": connected - started, "first_read": time.perf_counter() - connected}))
"""


def _first_use_in_fresh_processes(bucket: str, runs: int) -> tuple[list[float], list[float]]:
    connects, reads = [], []
    for _ in range(runs):
        result = subprocess.run(
            [sys.executable, "-c", _FIRST_USE, bucket],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        measured = json.loads(result.stdout.strip().splitlines()[-1])
        connects.append(measured["connect"])
        reads.append(measured["first_read"])
    return connects, reads


async def _measure(bucket: str, count: int) -> list[tuple[str, str]]:
    store = GcsObjectStore(bucket)
    await store.connect()  # first use is measured in fresh processes (run below)
    scope = MemoryScope(user_id=USER, thread_ts=THREAD)
    paths = [f"/memories/users/{USER}/note-{n:03}.md" for n in range(count)]
    text = "Prefers concise answers with examples.\n" * 10

    def tool() -> ScopedMemoryTool:
        # A turn's own tool: one turn makes at most MAX_CALLS_PER_TURN commands.
        return ScopedMemoryTool(ModelPathStore(store, scope), scope)

    creates = await _timed(
        [
            lambda p=p: tool().call({"command": "create", "path": p, "file_text": text})
            for p in paths
        ]
    )
    views = await _timed([lambda p=p: tool().call({"command": "view", "path": p}) for p in paths])
    return [
        (f"memory view x{count} (GCS emulator), median ms", str(median_ms(views))),
        (f"memory view x{count} (GCS emulator), p95 ms", str(percentile_ms(views, 95))),
        (f"memory create x{count} (GCS emulator), median ms", str(median_ms(creates))),
        (f"memory create x{count} (GCS emulator), p95 ms", str(percentile_ms(creates, 95))),
    ]


def run(quick: bool) -> list[tuple[str, str]]:
    count = 40 if quick else 200
    with GcsEmulator() as emulator, benchmark_environment(emulator.url):
        bucket = f"orion-bench-{uuid.uuid4().hex[:12]}"
        emulator.create_bucket(bucket)
        connects, reads = _first_use_in_fresh_processes(bucket, 3 if quick else 5)
        runs = len(connects)
        return [
            (
                f"memory store first use in a fresh process (import + client), median of {runs}",
                f"{median_ms(connects)} ms",
            ),
            (
                f"  then its first read (GCS emulator), median of {runs}",
                f"{median_ms(reads)} ms",
            ),
            *asyncio.run(_measure(bucket, count)),
        ]


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
