"""Run every benchmark and print one table: `uv run python -m bench.run [--quick]`."""

from __future__ import annotations

import importlib
import os
import platform
import sys
import time

from bench.stats import print_table

# Each module exposes `run(quick: bool) -> list[tuple[str, str]]`.
BENCHMARKS = [
    "bench.cold_start",
    "bench.thread_start",
    "bench.first_words",
    "bench.storage_trouble",
    "bench.storage_request_cpu",
    "bench.storage_requests",
    "bench.burst",
    "bench.memory_latency",
    "bench.memory_erasure",
    "bench.memory_notes",
    "bench.turn_end",
    "bench.prompt_cache",
    "bench.throughput",
    "bench.intake",
    "bench.secret_shapes",
    "bench.hostile_input",
    "bench.preference_languages",
    "bench.recall_search",
    "bench.recall_hard",
]


def main() -> None:
    quick = "--quick" in sys.argv
    rows: list[tuple[str, str]] = []
    for name in BENCHMARKS:
        started = time.monotonic()
        try:
            rows.extend(importlib.import_module(name).run(quick))
        except Exception as exc:  # one broken benchmark must not hide the others
            rows.append((f"{name}: FAILED", f"{type(exc).__name__}: {exc}"))
        print(f"{name}: {time.monotonic() - started:.1f}s", file=sys.stderr)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(f"Machine: {machine}; mode: {'quick' if quick else 'full'}\n")
    print_table(rows)


if __name__ == "__main__":
    main()
