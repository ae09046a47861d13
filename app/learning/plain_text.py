"""Text as people type it, every run of whitespace (Python's `str.isspace()`: Unicode spaces,
tabs, line separators…) collapsed to one character in a linear C-level pass, so that patterns
looking for "some whitespace" between words do not go quadratic on a 40,000-character run."""

from __future__ import annotations

import re

# Every character `str.splitlines()` ends a line at: these runs become one line break.
_LINE_BREAK = re.compile("[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
# Whitespace other than the line break, in runs: one space each.
_SPACES = re.compile(r"[^\S\n]+")
# What is left between two lines: at most a space on either side of each break.
_BETWEEN_LINES = re.compile(r" ?\n[\n ]*")
_ANY_SPACE = re.compile(r"\s+")


def collapse_spaces(text: str) -> str:
    """`text` with each run of whitespace made one space, or one line break when the run
    holds a line break; stripped. Linear in `len(text)`."""
    lines = _LINE_BREAK.sub("\n", text)
    return _BETWEEN_LINES.sub("\n", _SPACES.sub(" ", lines)).strip()


def clip(text: str, limit: int) -> str:
    """`text` within `limit` characters, marked with "…" where cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def one_line(text: str, limit: int) -> str:
    """`text` on one line (each whitespace run one space), cut to at most `limit`
    characters. Linear in `len(text)`."""
    flat = _ANY_SPACE.sub(" ", text).strip()
    return flat[:limit].rstrip()
