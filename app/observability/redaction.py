"""Scrub secrets from anything Orion emits or keeps (docs/memory-controls.md): its own (`redact`)
and anybody's, by shape (`redact_secret_shapes`); imports nothing of Orion's outside its package."""

from __future__ import annotations

import functools
import string
from collections.abc import Iterable, Iterator
from typing import cast

from app.observability.invisible_text import VisibleText
from app.observability.secret_shapes import SECRET_SHAPES, SecretShape

REDACTED = "[REDACTED]"
# What a secret found by its shape becomes in stored text.
SHAPE_REDACTED = "[redacted]"
_secrets: tuple[str, ...] = ()


def register_secrets(values: Iterable[str]) -> None:
    global _secrets
    # Longest first so a secret containing another is replaced whole.
    _secrets = tuple(sorted({v for v in values if len(v) >= 4}, key=len, reverse=True))
    _short_text_redacted.cache_clear()


def redact(value: object) -> object:
    """Return `value` with every registered secret replaced, recursing into containers."""
    if not _secrets:
        return value
    if isinstance(value, str):
        for secret in _secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {key: redact(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact(item) for item in value)
    return value


# --- secrets recognised by their shape ---------------------------------------------------


def redact_secret_shapes(text: str) -> str:
    """`text` with every secret of a known shape replaced, matched on its visible text
    (app/observability/invisible_text.py). No secrets: the same object back; idempotent;
    a shape's pattern runs only when its anchor is in the text."""
    visible = VisibleText.of(text)
    lowered = _lower_in_place(visible.text)
    anchors_in_text = _anchors_in(lowered)
    if not anchors_in_text:
        return text  # most text: one lower-casing and a few substring searches
    spans = sorted(
        span
        for shape in _shapes_with(anchors_in_text)
        if shape.may_occur_in(visible.text, anchors_in_text)
        for span in shape.secret_spans(visible.text, lowered)
    )
    pieces: list[str] = []
    kept_until = 0
    for start, end in _merged(spans):
        start, end = visible.original_span(start, end)
        if text[start:end] == SHAPE_REDACTED:
            continue  # redacted before
        pieces += (text[kept_until:start], SHAPE_REDACTED)
        kept_until = end
    if not pieces:
        return text
    pieces.append(text[kept_until:])
    return "".join(pieces)


def redact_everything(value: object) -> object:
    """`value` with Orion's own secrets and every known shape replaced, recursing into lists,
    tuples and dicts (keys too): what is logged and sent to Langfuse."""
    if isinstance(value, str):
        if len(value) <= _SHORT:
            return _short_text_redacted(value)
        return redact_secret_shapes(cast(str, redact(value)))
    if isinstance(value, dict):
        return {redact_everything(key): redact_everything(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_everything(item) for item in value)
    return value


# Log lines repeat their short values (names, ids): each is scrubbed once, not per line
# (docs/benchmarks.md, "Measured once, behind a choice in the code").
_SHORT = 200


@functools.lru_cache(maxsize=8192)
def _short_text_redacted(text: str) -> str:
    return redact_secret_shapes(cast(str, redact(text)))


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _lower_in_place(text: str) -> str:
    """`text` in lower case with every character where it was: `str.lower` unless it
    turned one character into two (`İ`), then the ASCII letters only (slower)."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


def _merged(spans: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Sorted spans, overlapping ones joined (two shapes may find the same secret, or
    one inside another). Adjacent ones stay apart: each was a secret of its own."""
    current: tuple[int, int] | None = None
    for start, end in spans:
        if current is not None and start < current[1]:
            current = (current[0], max(current[1], end))
            continue
        if current is not None:
            yield current
        current = (start, end)
    if current is not None:
        yield current


def _anchors_in(lowered: str) -> frozenset[str]:
    """The anchors `lowered` holds. Each search reads the whole text: skip anchors needing a
    character it lacks (`_`, `=`), and search ASCII ones in its ASCII characters alone
    (several times faster; at worst an extra anchor, a pattern run that finds nothing)."""
    ascii_only = lowered if lowered.isascii() else lowered.encode("ascii", "ignore").decode()
    gates = frozenset(char for char in _GATES if char in ascii_only)
    found = {anchor for anchor in _ASCII_ANCHORS[gates] if anchor in ascii_only}
    if ascii_only is not lowered:
        found.update(anchor for anchor in _OTHER_ANCHORS if anchor in lowered)
    return frozenset(found)


def _shapes_with(anchors: frozenset[str]) -> Iterator[SecretShape]:
    """The shapes one of whose anchors is among `anchors`, each once: most text holds
    only a digit or two (ids, times), which only the card numbers are anchored on."""
    if len(anchors) == 1:
        yield from _SHAPES_BY_ANCHOR[next(iter(anchors))]
        return
    seen: set[int] = set()
    for anchor in anchors:
        for shape in _SHAPES_BY_ANCHOR[anchor]:
            if id(shape) not in seen:
                seen.add(id(shape))
                yield shape


# Every shape's anchors, in lower case: text holding none of them holds no secret.
_ANY_ANCHOR = tuple(sorted({anchor.lower() for shape in SECRET_SHAPES for anchor in shape.anchors}))
_OTHER_ANCHORS = tuple(anchor for anchor in _ANY_ANCHOR if not anchor.isascii())
_SHAPES_BY_ANCHOR = {
    anchor: tuple(
        shape for shape in SECRET_SHAPES if anchor in (each.lower() for each in shape.anchors)
    )
    for anchor in _ANY_ANCHOR
}
_GATES = ("_", "=")
# The ASCII anchors worth looking for, given which of the gates the text holds.
_ASCII_ANCHORS = {
    frozenset(held): tuple(
        anchor
        for anchor in _ANY_ANCHOR
        if anchor.isascii() and all(gate in held for gate in _GATES if gate in anchor)
    )
    for held in ((), ("_",), ("=",), ("_", "="))
}
