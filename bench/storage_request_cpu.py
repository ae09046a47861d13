"""CPU per storage request: Orion's GCS store against plain google-cloud-storage calls.

Both sides send the same requests to the same emulator (fake-gcs-server on loopback, its own
process, so its CPU is not counted) for the same objects:

- `orion`: `GcsObjectStore.read` / `.write` — google-cloud-storage in the store's thread
  pool, with what Orion adds: the ranged read that keeps the object's time
  (app/storage/gcs_connection.py), the write id, deadline handling and error translation;
- `library`: `Blob.download_as_bytes` and `Blob.upload_from_string` (multipart, with the
  write-id metadata and the same conditional retry policy) in a 256-thread pool, on a
  client whose connection pool is sized the same way (`tune_session`).

Reads are of a 1 KB preferences-sized object; writes are conditional (`ifGenerationMatch`)
creates of fresh keys, as claims and index updates are. Each figure is `time.process_time()`
of this process divided by the requests, one after another and 40 at once, as the median of
several rounds measured interleaved (orion, library, orion, …) so a noisy neighbour hits
both alike.

Run alone with `uv run python -m bench.storage_request_cpu [--quick]`.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from app.storage.gcs import GcsObjectStore, content_type_for
from app.storage.gcs_connection import STORAGE_WORKERS, tune_session
from app.storage.store import CREATE_ONLY
from bench.environment import benchmark_environment
from bench.stats import print_table
from tests.fakes.gcs import GcsEmulator

KEY = "people/U0BENCH/memory/preferences.json"
CONTENT = '{"name": "Camille", "timezone": "Europe/Paris", "style": "short"}' * 16


class LibraryStore:
    """The same reads and writes through google-cloud-storage, in worker threads."""

    def __init__(self, bucket: str) -> None:
        from google.cloud import storage
        from google.cloud.storage.retry import (
            DEFAULT_RETRY,
            ConditionalRetryPolicy,
            is_generation_specified,
        )

        self._client = storage.Client()
        tune_session(self._client, STORAGE_WORKERS)
        self._bucket = self._client.bucket(bucket)
        self._retry = DEFAULT_RETRY.with_delay(initial=0.1, maximum=2.0).with_timeout(10.0)
        self._conditional = ConditionalRetryPolicy(
            self._retry, is_generation_specified, ["query_params"]
        )
        self._pool = ThreadPoolExecutor(STORAGE_WORKERS)

    async def read(self, key: str) -> bytes:
        blob = self._bucket.blob(key)
        call = lambda: blob.download_as_bytes(timeout=5.0, retry=self._retry)  # noqa: E731
        return bytes(await asyncio.get_running_loop().run_in_executor(self._pool, call))

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        blob = self._bucket.blob(key)
        blob.metadata = {"orion-write-id": uuid.uuid4().hex}

        def upload() -> int:
            blob.upload_from_string(
                content.encode(),
                content_type=content_type_for(key),
                if_generation_match=if_generation,
                timeout=5.0,
                retry=self._conditional,
            )
            return int(blob.generation or 0)

        return await asyncio.get_running_loop().run_in_executor(self._pool, upload)


async def _cpu_per_request(
    request: Callable[[int], Awaitable[Any]], count: int, at_once: int
) -> float:
    """Milliseconds of this process's CPU per request, `at_once` in flight at a time."""
    started = time.process_time()
    for first in range(0, count, at_once):
        await asyncio.gather(*(request(i) for i in range(first, min(count, first + at_once))))
    return (time.process_time() - started) / count * 1000


async def _measure(bucket: str, count: int, rounds: int) -> list[tuple[str, str]]:
    orion = GcsObjectStore(bucket)
    library = LibraryStore(bucket)
    await orion.write(KEY, CONTENT)
    stores: dict[str, Any] = {"orion": orion, "library": library}
    for store in stores.values():  # warm: connections open, code paths loaded
        for _ in range(20):
            await store.read(KEY)
    figures: dict[tuple[str, str, int], list[float]] = {}
    for round_ in range(rounds):
        for name, store in stores.items():
            for at_once in (1, 40):
                read = lambda i, s=store: s.read(KEY)  # noqa: E731
                prefix = f"w/{name}/{round_}/{at_once}"

                def write(i: int, s: Any = store, p: str = prefix) -> Awaitable[int]:
                    return s.write(f"{p}/{i}.json", CONTENT, if_generation=CREATE_ONLY)

                for operation, request in (("read", read), ("write", write)):
                    cpu = await _cpu_per_request(request, count, at_once)
                    figures.setdefault((operation, name, at_once), []).append(cpu)
    await orion.close()
    rows = []
    for operation in ("read", "write"):
        for at_once in (1, 40):
            mine = statistics.median(figures[(operation, "orion", at_once)])
            theirs = statistics.median(figures[(operation, "library", at_once)])
            how = "one at a time" if at_once == 1 else f"{at_once} at once"
            rows.append(
                (
                    f"storage CPU per {operation}, {how}: Orion's store / plain "
                    f"google-cloud-storage calls (median of {rounds} rounds of {count})",
                    f"{mine:.2f} / {theirs:.2f} ms",
                )
            )
    return rows


def run(quick: bool) -> list[tuple[str, str]]:
    with GcsEmulator() as emulator, benchmark_environment(emulator.url):
        bucket = f"orion-bench-{uuid.uuid4().hex[:12]}"
        emulator.create_bucket(bucket)
        return asyncio.run(_measure(bucket, 80 if quick else 400, 3 if quick else 5))


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
