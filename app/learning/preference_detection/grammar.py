"""What one language contributes to preference detection (a `Grammar`), and what all share. Each
form must match the whole sentence, keeping questions, stories and negations out ("he said: call
me Sam"); no two quantifiers may share a run of characters, so the work stays linear."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from app.learning.language_names import canonical_language
from app.learning.preferences import MAX_VALUE_CHARS, Preference

# --- shared pieces of patterns ------------------------------------------------------------

# A name in an alphabetic script: up to three words, the first may end with a dot ("Dr.").
LATIN_NAME = r"(?P<value>[^\W\d_][\w'-]*\.?(?: [^\W\d_][\w'-]*){0,2})"
# A time zone as people write it: "Europe/Paris", "UTC+2", "CET", "Pacific".
TIMEZONE = r"(?P<value>[\w/+:. -]{2,40})"
# A team's name: up to three words (a longer tail is a story, not a name).
TEAM = r"(?P<value>[\w&/'-]+(?: [\w&/'-]+){0,2})"
# One word naming a language ("français", "Deutsch"): mapped to a canonical name or dropped.
LANGUAGE_WORD = r"(?P<value>[^\W\d_]{2,20})"
# Separators after an opener: spaces, commas, colons, dashes.
OPENER_END = r"\b[\s,:;–—-]*"


def words(text: str) -> str:
    """An alternation of the words in `text` (whitespace-separated; "_" stands for a
    space inside one alternative), longest first so that none hides a longer one."""
    choices = sorted((w.replace("_", " ") for w in text.split()), key=len, reverse=True)
    return "|".join(re.escape(w) for w in choices)


def phrases(text: str) -> tuple[str, ...]:
    """The whitespace-separated phrases of `text` ("_" stands for a space inside one), in order."""
    return tuple(w.replace("_", " ") for w in text.split())


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of `text`, casefolded."""
    return frozenset(text.casefold().split())


def flags(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def openers(text: str, *, no_comma: str = "", end: str = OPENER_END) -> re.Pattern[str]:
    """One opener of `text` (words as for `words`), then its separators. `no_comma` is the
    language's "no", an opener only before a comma ("No, call me Sam"): "no prefiero…"
    must keep its negation."""
    no = f"|{no_comma}(?=,)" if no_comma else ""
    return flags(f"(?:{words(text)}{no}){end}")


# --- what a language is ---------------------------------------------------------------------

Build = Callable[[re.Match[str]], str | None]


@dataclass(frozen=True)
class Form:
    """One way of stating a preference of kind `key`, matched against a whole sentence; its
    value `build(match)`, else the group `value`, else the whole sentence (a rule as said). A
    `durable_only` form needs "from now on" or the like: else an imperative is about this answer."""

    key: str
    pattern: re.Pattern[str]
    durable_only: bool = False
    build: Build | None = None


@dataclass(frozen=True)
class Grammar:
    language: str  # canonical name of the language, as language_names has it
    forms: tuple[Form, ...]
    openers: re.Pattern[str]  # one opener, matched at a position; taken off one by one
    fillers: tuple[str, ...] = ()  # closing fillers, lowercase, each after a separator
    durable: re.Pattern[str] | None = None  # "from now on", searched in the sentence
    reported: str = ""  # pattern source: reported speech, searched in the sentence
    asks: tuple[str, ...] = ()  # sentence endings that make a question without "?"
    not_names: frozenset[str] = frozenset()  # words after "call me" that are not a name
    not_preferred: re.Pattern[str] | None = None  # a `prefers` value this starts is none
    style: re.Pattern[str] | None = None  # words that make a preference a response style
    # A negation inside a name, time zone, team or language ("カミーユではありません",
    # "not Camille"): a language whose statements end in their verb says "is not" after
    # the value, where a form's value can reach.
    not_value: re.Pattern[str] | None = None
    filler_separators: str = " ,"
    # Short words of this language and few others ("il", "gli" in Italian): when a sentence
    # fits two languages' forms ("Usa sempre il sistema metrico" reads as Portuguese and
    # Italian), the one with more of its own words is the language it was said in.
    marks: re.Pattern[str] | None = None


# --- cleaning a value -------------------------------------------------------------------------

_SPACES = re.compile(r"\s+")
_QUOTES_AND_STOPS = " \"'.,;:«»“”„「」『』。、，！；："
SECRET = re.compile(
    r"\b(?:password|passcode|passwd|api[ _-]?key|secret|token|mot de passe|contraseña"
    r"|passwort|kennwort|senha|wachtwoord|parola d'ordine)s?\b|xox[abpre]-|sk-[A-Za-z0-9]"
    r"|パスワード|密码|密碼|비밀번호|暗証番号",
    re.IGNORECASE,
)


def preference_from(grammar: Grammar, form: Form, match: re.Match[str]) -> Preference | None:
    """The preference `match` (of `form`) states, cleaned; None when it states none."""
    if form.build is not None:
        raw = form.build(match)
    elif "value" in form.pattern.groupindex:
        raw = match.group("value")
    else:
        raw = match.group(0)
    if raw is None:
        return None
    key = form.key
    if key in _NAMED_THINGS and grammar.not_value is not None and grammar.not_value.search(raw):
        return None
    if key == "name":
        raw = _name(grammar, raw)
    elif key == "language":
        raw = canonical_language(raw)
    elif key == "prefers":
        if grammar.not_preferred is not None and grammar.not_preferred.match(raw):
            return None
        if grammar.style is not None and grammar.style.search(raw[: MAX_VALUE_CHARS + 1]):
            key = "response_style"
    value = clean(raw) if raw is not None else ""
    if not value or len(value) > MAX_VALUE_CHARS or SECRET.search(value):
        return None
    return Preference(key, value, said_in=grammar.language)


_NAMED_THINGS = frozenset({"name", "timezone", "team", "language"})


def clean(raw: str) -> str:
    return _SPACES.sub(" ", raw).strip(_QUOTES_AND_STOPS)


def _name(grammar: Grammar, raw: str) -> str | None:
    names = raw.split()
    if any(word.casefold() in grammar.not_names for word in names):
        return None  # "call me back later", "appelle-moi demain"
    if raw.islower():
        names = [word.capitalize() for word in names]
    return " ".join(names)


class Forms(tuple[Form, ...]):
    """A grammar's forms, one `add` after another, all matched case-insensitively."""

    def add(
        self, key: str, pattern: str, *, durable_only: bool = False, build: Build | None = None
    ) -> Forms:
        return Forms((*self, Form(key, flags(pattern), durable_only, build)))
