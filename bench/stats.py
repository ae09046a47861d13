"""Small helpers shared by the benchmarks: medians, percentiles, table printing."""

from __future__ import annotations

import statistics
import textwrap
from collections.abc import Sequence


def median_ms(seconds: Sequence[float]) -> float:
    return round(statistics.median(seconds) * 1000, 1)


def percentile_ms(seconds: Sequence[float], pct: float) -> float:
    ordered = sorted(seconds)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return round(ordered[index] * 1000, 1)


# The widest a printed table may be: a terminal, a CI log, a diff in review.
TABLE_WIDTH = 100
# The most of it the value column takes; a longer value (an error) wraps within it.
VALUE_WIDTH = 28


def table_lines(rows: Sequence[tuple[str, str]], width: int = TABLE_WIDTH) -> list[str]:
    """`rows` as a Markdown table no line of which is wider than `width`, whatever the names
    and values: a cell too long for its column goes on over the next lines, the row's
    other cell left blank there (each continuation indented by two spaces)."""
    values = [value for _, value in rows] + ["value"]
    value_width = min(max(len(value) for value in values), VALUE_WIDTH)
    metric_width = width - value_width - len("|  |  |")
    metrics = [metric for metric, _ in rows] + ["metric"]
    metric_width = min(metric_width, max(len(metric) for metric in metrics))

    def line(metric: str, value: str) -> str:
        return f"| {metric.ljust(metric_width)} | {value.ljust(value_width)} |"

    lines = [line("metric", "value"), f"|{'-' * (metric_width + 2)}|{'-' * (value_width + 2)}|"]
    for metric, value in rows:
        left = _wrapped(metric, metric_width)
        right = _wrapped(value, value_width)
        for n in range(max(len(left), len(right))):
            lines.append(line(left[n] if n < len(left) else "", right[n] if n < len(right) else ""))
    return lines


def _wrapped(text: str, width: int) -> list[str]:
    return textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False) or [""]


def print_table(rows: Sequence[tuple[str, str]]) -> None:
    print("\n".join(table_lines(rows)))
