"""Run every benchmark and print one table: `uv run python -m bench.run [--quick]`.

`--quick` (what CI runs: reported, never asserted) takes about a minute on two cores:
every benchmark at its quick size but those in `FULL_RUN_ONLY`, each of which takes a
minute or more on its own (fresh Orion processes, bursts, exhaustive inputs); the table
names them as left out. The table fits 100 columns (bench/stats.py)."""

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

# Left out of `--quick`, and why: each alone takes longer than the whole quick run
# (measured on two cores, bench/run.py --quick, 2026-11-28).
FULL_RUN_ONLY = {
    "bench.cold_start": "fresh Orion processes, several seconds each",
    "bench.storage_trouble": "slow, down and crowded storage, and a fresh process",
    "bench.burst": "bursts of people against each bot",
    "bench.throughput": "two Orion processes under event bursts",
    "bench.intake": "a fresh Orion process sent hundreds of megabytes",
    "bench.secret_shapes": "hundreds of adversarial 40,000-character inputs",
    "bench.hostile_input": "hostile 40,000-character messages, old code and new",
    "bench.recall_hard": "the hard recall set and 2,000 conversations",
}


def main() -> None:
    quick = "--quick" in sys.argv
    rows: list[tuple[str, str]] = []
    for name in BENCHMARKS:
        if quick and name in FULL_RUN_ONLY:
            rows.append((f"{name}: full run only ({FULL_RUN_ONLY[name]})", "-"))
            continue
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
