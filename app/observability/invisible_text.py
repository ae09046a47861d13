"""Text without its invisible characters and with Slack's entities decoded, with the way back to
the original: secrets are found in the visible text, and replaced in the original."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property

# Every format character (Unicode Cf) as of Unicode 15.1 (the test checks the running Python's),
# and the few others that render as nothing: the combining grapheme joiner, Hangul fillers,
# Khmer inherent vowels, Mongolian free variation selectors, the variation selectors.
_INVISIBLE_CLASS = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
    "\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u3164\uffa0\ufe00-\ufe0f"
    "\U000e0100-\U000e01ef"
)
INVISIBLE = re.compile(f"[{_INVISIBLE_CLASS}]")
_ENTITY = re.compile("&(?:amp|lt|gt);")
# What the visible text does not have as written: runs of invisible characters, entities.
_HIDDEN = re.compile(f"[{_INVISIBLE_CLASS}]+|&(?:amp|lt|gt);")


@dataclass(frozen=True)
class VisibleText:
    """`text` is what remains of `original` without its invisible characters."""

    original: str
    text: str

    @classmethod
    def of(cls, original: str) -> VisibleText:
        if "&" not in original and (original.isascii() or INVISIBLE.search(original) is None):
            return cls(original, original)  # most text: no copy
        # The three entities never overlap (each has its `&` first), so decoding them one
        # after the other finds exactly the ones `_HIDDEN` does, left to right.
        text = original.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        if not text.isascii():
            text = INVISIBLE.sub("", text)
        return cls(original, original if text == original else text)

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of `original` that `text[start:end]` (not empty) came from, with the
        invisible characters between its first and last character, and the whole of an
        entity its last character was."""
        if self.text is self.original:
            return start, end
        last = self._original_index(end - 1)
        entity = _ENTITY.match(self.original, last)
        return self._original_index(start), entity.end() if entity else last + 1

    @cached_property
    def _run_starts(self) -> tuple[list[int], list[int]]:
        """Where each run of characters the visible text has as written begins, in `text`
        and in `original` (an entity is a run of its own, of one character): worked out
        only when a span is asked for (when a secret was found)."""
        visible_starts: list[int] = []
        original_starts: list[int] = []
        length = position = 0
        for hidden in _HIDDEN.finditer(self.original):
            if hidden.start() > position:
                visible_starts.append(length)
                original_starts.append(position)
                length += hidden.start() - position
            if hidden.group()[0] == "&":
                visible_starts.append(length)
                original_starts.append(hidden.start())
                length += 1
            position = hidden.end()
        visible_starts.append(length)
        original_starts.append(position)
        return visible_starts, original_starts

    def _original_index(self, index: int) -> int:
        visible_starts, original_starts = self._run_starts
        run = bisect_right(visible_starts, index) - 1
        return original_starts[run] + index - visible_starts[run]
