"""A message cut into the sentences preference detection reads, in bounded, linear time: only a
prefix of it (preferences are stated in conversation, not at the end of a long paste), its
whitespace collapsed, questions dropped whatever their language (docs/memory-controls.md, "How
preferences are heard", says where a sentence ends)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.learning.plain_text import collapse_spaces

MAX_SCANNED_CHARS = 4_000
MAX_SENTENCES = 40

_BREAK = re.compile(r"(?<=[.!?;]) |\n|(?<=[。！？；])")
# "Call me Dr. Okafor", "Llámame Dra. García": these dots are hidden while splitting.
_ABBREVIATION = re.compile(r"\b(Dr|Dra|Mr|Mrs|Ms|Mx|Prof|St|Sr|Sra|Srta|Mme|Mlle)\.(?=\s)")
_HIDDEN_DOT = "\u2024"
_APOSTROPHE = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})
_CLOSING_QUOTES = " \"'»”」』)）"
QUESTION_MARKS = ("?", "？")
OPENING_QUESTION_MARK = "¿"


def sentences(message: str) -> Iterator[str]:
    """The statements of `message` that are read, in order, stripped; questions left out."""
    cut_short = len(message) > MAX_SCANNED_CHARS
    text = collapse_spaces(message[:MAX_SCANNED_CHARS].translate(_APOSTROPHE))
    text = _ABBREVIATION.sub(rf"\1{_HIDDEN_DOT}", text)
    pieces = _BREAK.split(text, maxsplit=MAX_SENTENCES)
    if len(pieces) > MAX_SENTENCES or cut_short:
        # The last piece is the unread rest, or a sentence the prefix cut short ("Call me
        # Sam" of "Call me Samantha"): neither is read.
        pieces.pop()
    for raw in pieces:
        sentence = raw.replace(_HIDDEN_DOT, ".").strip()
        if sentence and not is_question(sentence):
            yield sentence


def is_question(sentence: str) -> bool:
    return (
        sentence.rstrip(_CLOSING_QUOTES).endswith(QUESTION_MARKS)
        or OPENING_QUESTION_MARK in sentence
    )
