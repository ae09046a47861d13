"""Preferences people state in passing, captured without a model (docs/memory-controls.md, "How
preferences are heard"), in time linear in what is read."""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.learning.plain_text import collapse_spaces
from app.learning.preference_detection.east_asian import CHINESE, JAPANESE, KOREAN
from app.learning.preference_detection.english import ENGLISH
from app.learning.preference_detection.germanic import DUTCH, GERMAN
from app.learning.preference_detection.grammar import Grammar, preference_from
from app.learning.preference_detection.romance import FRENCH, ITALIAN, PORTUGUESE, SPANISH
from app.learning.preferences import Preference

__all__ = ["GRAMMARS", "MAX_SCANNED_CHARS", "MAX_SENTENCES", "detect_preferences"]

GRAMMARS: tuple[Grammar, ...] = (
    *(ENGLISH, FRENCH, SPANISH, PORTUGUESE, ITALIAN, GERMAN, DUTCH, JAPANESE, CHINESE, KOREAN),
)
# Reported speech in any language makes a sentence hearsay for all of them: "Appelle-moi
# Sam, he said" is not the person's own request.
_REPORTED = re.compile("|".join(f"(?:{g.reported})" for g in GRAMMARS if g.reported), re.I)
# Punctuation that ends a statement without changing it.
_CLOSING = ".!;:, 。！；：、，～~…"


def detect_preferences(message: str) -> list[Preference]:
    """Every preference stated in `message`, in order (several per message are fine)."""
    found: list[Preference] = []
    for sentence in sentences(message):
        if _REPORTED.search(sentence):
            continue
        preference = _statement(sentence)
        if preference is not None:
            found.append(preference)
    return found


def _statement(sentence: str) -> Preference | None:
    """What `sentence` states, in the language whose forms it fits; when it fits several
    (close languages share words), the one with the most of its own short words, and on
    a tie the first in GRAMMARS."""
    fits = [(g, p) for g in GRAMMARS if (p := _statement_in(g, sentence)) is not None]
    if len(fits) <= 1:
        return fits[0][1] if fits else None
    _, preference = max(fits, key=lambda fit: _marks(fit[0], sentence))
    return preference


def _statement_in(grammar: Grammar, sentence: str) -> Preference | None:
    text = sentence.rstrip(_CLOSING)
    if text.endswith(grammar.asks):
        return None
    durable = grammar.durable is not None and grammar.durable.search(sentence) is not None
    text = _without_fillers(grammar, _without_openers(grammar, text))
    if not text:
        return None
    for form in grammar.forms:
        if form.durable_only and not durable:
            continue
        if (match := form.pattern.fullmatch(text)) and (
            preference := preference_from(grammar, form, match)
        ):
            return preference
    return None


def _marks(grammar: Grammar, sentence: str) -> int:
    if grammar.marks is None:
        return 0
    return len({mark.casefold() for mark in grammar.marks.findall(sentence)})


def _without_openers(grammar: Grammar, sentence: str) -> str:
    start = 0
    while (lead := grammar.openers.match(sentence, start)) and lead.end() > start:
        start = lead.end()
    return sentence[start:]


def _without_fillers(grammar: Grammar, sentence: str) -> str:
    """`sentence` without its closing fillers ("…, please", "… bitte danke"), taken off the
    end one at a time rather than by a pattern anchored at the end, which would be tried
    (and fail) from every position of a long run of commas."""
    end = len(sentence)
    while filler := _filler_ending_at(grammar, sentence, end):
        end -= len(filler)
        while end > 0 and sentence[end - 1] in grammar.filler_separators + _CLOSING:
            end -= 1
    return sentence[:end].strip()


def _filler_ending_at(grammar: Grammar, sentence: str, end: int) -> str | None:
    """The closing filler that ends at `end`, after a separator; None if there is none."""
    for filler in grammar.fillers:
        start = end - len(filler)
        if (
            start > 0
            and sentence[start - 1] in grammar.filler_separators
            and sentence[start:end].lower() == filler
        ):
            return filler
    return None


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
