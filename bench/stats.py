"""Small helpers shared by the benchmarks: medians, percentiles, table printing."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def median_ms(seconds: Sequence[float]) -> float:
    return round(statistics.median(seconds) * 1000, 1)


def percentile_ms(seconds: Sequence[float], pct: float) -> float:
    ordered = sorted(seconds)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return round(ordered[index] * 1000, 1)


def print_table(rows: Sequence[tuple[str, str]]) -> None:
    width = max(len(metric) for metric, _ in rows)
    print(f"| {'metric'.ljust(width)} | value |")
    print(f"|{'-' * (width + 2)}|-------|")
    for metric, value in rows:
        print(f"| {metric.ljust(width)} | {value} |")
