"""The benchmarks' table (`python -m bench.run`) fits a 100-column terminal, whatever its
rows say, and loses none of it."""

from __future__ import annotations

from bench.stats import TABLE_WIDTH, table_lines

ROWS = [
    (
        "forget everything, 200 objects (GCS emulator), x5: click → emptied Home tab shown, "
        "median ms, with more words than any column holds",
        "461.5",
    ),
    ("short", "1"),
    ("bench.storage_trouble: FAILED", "RuntimeError: a failure that says a great deal more"),
]


def test_every_line_fits_and_every_word_is_there() -> None:
    lines = table_lines(ROWS)

    assert all(len(line) <= TABLE_WIDTH for line in lines)
    assert set(lines[1]) == {"|", "-"}, "the header's rule"
    assert all(line.startswith("| ") and line.endswith(" |") for line in lines[2:])
    shown = " ".join(" ".join(line.split()) for line in lines)
    for metric, value in ROWS:
        assert all(word in shown for word in (metric + " " + value).split())


def test_a_table_that_fits_is_one_line_a_row() -> None:
    lines = table_lines([("a metric", "12.5"), ("another metric", "3")])
    assert lines[2:] == ["| a metric       | 12.5  |", "| another metric | 3     |"]
