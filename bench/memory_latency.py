"""Memory tool latency against the GCS emulator: `view` and `create` through ScopedMemoryTool.

Each command goes the whole way a model's tool call goes: input validation, scope check,
span and log line, the store's worker thread, google-cloud-storage, HTTP to a local
fake-gcs-server. Loopback hides network latency, so these figures are Orion's own
overhead per command; in Cloud Run add one (view) or two (create: list + upload) GCS
round trips. Run alone with `uv run python -m bench.memory_latency [--quick]`.
"""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from collections.abc import Awaitable, Callable

from app.memory.scopes import MemoryScope
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


async def _measure(bucket: str, count: int) -> list[tuple[str, str]]:
    store = GcsObjectStore(bucket)
    started = time.perf_counter()
    await store.connect()  # imports google-cloud-storage and builds the client
    connect_ms = round((time.perf_counter() - started) * 1000, 1)
    tool = ScopedMemoryTool(store, MemoryScope(user_id=USER, thread_ts=THREAD))
    paths = [f"/memories/users/{USER}/note-{n:03}.md" for n in range(count)]
    text = "Prefers concise answers with examples.\n" * 10

    creates = await _timed(
        [lambda p=p: tool.call({"command": "create", "path": p, "file_text": text}) for p in paths]
    )
    views = await _timed([lambda p=p: tool.call({"command": "view", "path": p}) for p in paths])
    return [
        ("memory store first use (import + client), ms", str(connect_ms)),
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
        return asyncio.run(_measure(bucket, count))


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
