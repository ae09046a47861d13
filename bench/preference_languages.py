"""Preference detection per language: precision and recall on the labelled set, and the CPU
one message costs.

The labelled set is tests/learning/preference_cases.py (the tests hold it to precision
1.0 and recall >= 0.9 per language): per language, statements of every kind Orion keeps
(name, timezone, team, language, response style, prefers, always / never rules),
corrections, questions, reported speech, negations and hypotheticals, and sentences that
merely contain the words. A detected preference is right when its key and value are the
labelled ones; precision = right / detected, recall = right / labelled.

Beside it, in the same run, the detector as it was before it learned other languages
(git revision BEFORE_REV, English only) on the same set.

CPU: `time.thread_time` around one `detect_preferences` call, each message of the set
repeated and its median kept; per language the median and p99 of those medians. And the
worst of the 40,000-character messages shaped against the patterns
(tests/security/preference_shapes.py: CJK runs, forms opened and never closed, fillers
repeated), each the median of a few runs. Single-threaded, in this process.

Run alone with `uv run python -m bench.preference_languages [--quick]`.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence

from app.learning.preference_detection import detect_preferences
from app.learning.preferences import Preference
from bench.hostile_input import _old_module
from bench.stats import median_ms, percentile_ms, print_table
from tests.learning.preference_cases import CASES, Case
from tests.security.preference_shapes import PREFERENCE_SHAPES

GOAL_PRECISION, GOAL_RECALL = 1.0, 0.9
# The last revision whose detector read English only.
BEFORE_REV = "6f7ebd8"
BEFORE_PATH = "app/learning/preference_detection.py"

Detect = Callable[[str], Sequence[Preference]]


def score(detect: Detect, cases: Sequence[Case]) -> tuple[float | None, float]:
    """Precision (None when nothing was detected) and recall of `detect` on `cases`."""
    right = detected = labelled = 0
    for case in cases:
        found = {p.key: p.value for p in detect(case.text)}
        detected += len(found)
        labelled += len(case.expected)
        right += sum(case.expected.get(key) == value for key, value in found.items())
    precision = right / detected if detected else None
    return precision, right / labelled if labelled else 1.0


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def cpu_s(detect: Detect, text: str, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        started = time.thread_time()
        detect(text)
        samples.append(time.thread_time() - started)
    return statistics.median(samples)


def _cpu_us(detect: Detect, cases: Sequence[Case], repeat: int) -> str:
    # In milliseconds, so that the helpers (which scale seconds to ms) give µs.
    per_message = [cpu_s(detect, case.text, repeat) * 1000 for case in cases]
    return f"{median_ms(per_message):.0f} / {percentile_ms(per_message, 99):.0f}"


def run(quick: bool) -> list[tuple[str, str]]:
    repeat = 5 if quick else 41
    before = _old_module("preference_detection_english_only", BEFORE_PATH, BEFORE_REV)
    rows: list[tuple[str, str]] = []
    below_goal = []
    for language, cases in CASES.items():
        precision, recall = score(detect_preferences, cases)
        if (precision is not None and precision < GOAL_PRECISION) or recall < GOAL_RECALL:
            below_goal.append(language)
        cpu = _cpu_us(detect_preferences, cases, repeat)
        was = "not measured (no git)"
        if before is not None:
            was_precision, was_recall = score(before.detect_preferences, cases)
            was_cpu = _cpu_us(before.detect_preferences, cases, repeat)
            was = f"{_ratio(was_precision)} / {was_recall:.2f}; {was_cpu}"
        rows.append(
            (
                f"preferences, {language} ({len(cases)} cases): precision / recall; CPU per "
                "message median / p99 µs; before (English only): the same",
                f"{_ratio(precision)} / {recall:.2f}; {cpu}; {was}",
            )
        )
    hostile_repeat = 3 if quick else 7
    worst = {
        name: cpu_s(detect_preferences, text, hostile_repeat)
        for name, text in PREFERENCE_SHAPES.items()
    }
    worst_name = max(worst, key=worst.__getitem__)
    rows.append(
        (
            f"preferences, {len(PREFERENCE_SHAPES)} hostile 40,000-char messages: worst CPU ms "
            f"(median of {hostile_repeat}), which",
            f"{worst[worst_name] * 1000:.1f} ({worst_name})",
        )
    )
    goal = "met" if not below_goal else f"NOT met: {', '.join(below_goal)}"
    rows.append((f"preferences, goal precision {GOAL_PRECISION} and recall >= {GOAL_RECALL}", goal))
    return rows


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
