"""Preferences people state in passing, captured without asking a model.

"I prefer bullet points", "call me Sam", "my timezone is Europe/Paris": said once, they
should hold in every later thread whether or not Claude thought to save them. Each
message is split into sentences and each sentence is matched against a few anchored
statement forms; anything else — questions ("do you prefer…?"), reported speech ("she
said always…"), "I never said that" in the middle of a story — is left alone. Missing a
preference costs little (Claude can still save it with the memory tool); inventing one
costs trust, so the patterns are deliberately narrow.

Whatever a message holds, reading it costs little: only its first MAX_SCANNED_CHARS
characters and MAX_SENTENCES sentences are read (preferences are stated in conversation,
not at the end of a long paste), each whitespace run is first made one space or one line
break (app/learning/plain_text.py), and no pattern below runs two quantifiers that could
share a run of characters, so the work is linear in what is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from app.learning.plain_text import collapse_spaces
from app.learning.preferences import MAX_VALUE_CHARS, Preference

# What is read of one message.
MAX_SCANNED_CHARS = 4_000
MAX_SENTENCES = 40

# --- sentences -------------------------------------------------------------------------

# On collapsed text: a space after closing punctuation, or a line break.
_SENTENCE_BREAK = re.compile(r"(?<=[.!?;]) |\n")
# "Call me Dr. Okafor" is one sentence: these dots are hidden while splitting.
_ABBREVIATION = re.compile(r"\b(Dr|Mr|Mrs|Ms|Mx|Prof|St)\.(?=\s)")
_HIDDEN_DOT = "\u2024"
_APOSTROPHE = str.maketrans({"’": "'", "‘": "'"})
# Openers that don't change what the sentence says. "From now on" and friends also make an
# instruction durable (see _PERSISTENT). Matched at a position (`match(text, pos)`), one
# opener after the other.
_LEAD = re.compile(
    r"(?:please|also|actually|and|oh|ok|okay|so|btw|by the way|fyi|just so you know|for the record"
    r"|for future reference|from now on|going forward|in (?:the )?future|remember(?: that)?"
    r"|note(?: that)?|just|hey|hi)\b[\s,:;–—-]*",
    re.IGNORECASE,
)
# Closing fillers, each after a space or comma ("…, please", "… from now on thanks"). Taken
# off the end one at a time rather than by a pattern anchored at the end, which would be
# tried (and fail) from every position of a long run of commas.
_TRAILING_FILLERS = (
    "please",
    "thanks",
    "thank you",
    "from now on",
    "going forward",
    "in future",
    "in the future",
    "for future",
    "for the future",
    "if possible",
    "if you can",
    "anymore",
    "again",
)
_FILLER_SEPARATORS = " ,"
_PERSISTENT = re.compile(
    r"\b(?:from now on|going forward|in (?:the )?future|for (?:the )?future|anymore)\b",
    re.IGNORECASE,
)
_SECRET = re.compile(
    r"\b(?:password|passcode|passwd|api[ _-]?key|secret|token)s?\b|xox[abpre]-|sk-[A-Za-z0-9]",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Sentence:
    text: str  # openers and closing fillers removed
    persistent: bool  # "from now on", "going forward"...


def _sentences(message: str) -> Iterator[_Sentence]:
    cut_short = len(message) > MAX_SCANNED_CHARS
    message = collapse_spaces(message[:MAX_SCANNED_CHARS].translate(_APOSTROPHE))
    message = _ABBREVIATION.sub(rf"\1{_HIDDEN_DOT}", message)
    pieces = _SENTENCE_BREAK.split(message, maxsplit=MAX_SENTENCES)
    if len(pieces) > MAX_SENTENCES or cut_short:
        # The last piece is the unread rest, or a sentence the prefix cut short ("Call me
        # Sam" of "Call me Samantha"): neither is read.
        pieces.pop()
    for raw in pieces:
        sentence = raw.replace(_HIDDEN_DOT, ".").strip()
        if not sentence or sentence.endswith("?"):
            continue  # a question states nothing
        persistent = bool(_PERSISTENT.search(sentence))
        sentence = _without_trailing_fillers(_without_openers(sentence.rstrip(".!;:, ")))
        if sentence:
            yield _Sentence(sentence, persistent)


def _without_openers(sentence: str) -> str:
    start = 0
    while (lead := _LEAD.match(sentence, start)) and lead.end() > start:
        start = lead.end()
    return sentence[start:]


def _without_trailing_fillers(sentence: str) -> str:
    end = len(sentence)
    while filler := _filler_ending_at(sentence, end):
        end -= len(filler)
        while end > 0 and sentence[end - 1] in _FILLER_SEPARATORS:
            end -= 1
    return sentence[:end].strip()


def _filler_ending_at(sentence: str, end: int) -> str | None:
    """The closing filler that ends at `end`, after a space or comma; None if there is none."""
    for filler in _TRAILING_FILLERS:
        start = end - len(filler)
        if (
            start > 0
            and sentence[start - 1] in _FILLER_SEPARATORS
            and sentence[start:end].lower() == filler
        ):
            return filler
    return None


# --- the statement forms ---------------------------------------------------------------

_LANGUAGES = (
    "English|French|German|Spanish|Italian|Portuguese|Dutch|Swedish|Norwegian|Danish|Finnish"
    "|Polish|Czech|Greek|Turkish|Russian|Ukrainian|Arabic|Hebrew|Hindi|Japanese|Chinese"
    "|Mandarin|Cantonese|Korean|Vietnamese|Thai|Indonesian"
)
# Verbs that make "always …" / "never …" an instruction to Orion ("never mind" is not).
_VERBS = (
    "use|include|reply|respond|answer|write|give|show|add|cite|put|format|start|end|keep"
    "|mention|ask|send|summari[sz]e|explain|provide|link|sign|call|address|refer|tell|remind"
    "|offer|list|quote|check|double-check|assume|suggest|recommend|translate|spell|round"
    "|convert|apologi[sz]e|be|make|bold|number|sort|skip|attach|tag|avoid|leave|wrap|talk"
    "|speak|greet|open|close|highlight|capitali[sz]e|abbreviate|omit|share|copy|post|reference"
)
# Words that follow "call me" without being a name ("call me back", "call me later").
_NAME_STOPWORD_TEXT = """
    a an the back later when whenever if after before at on
    in by to up out about again now soon tomorrow today tonight
    asap anytime sometime once maybe not no it that this what you
    me crazy names anything whatever
"""
_NAME_STOPWORDS = frozenset(_NAME_STOPWORD_TEXT.split())
_STYLE_WORDS = re.compile(
    r"\b(?:bullet(?:s|ed)?|lists?|short(?:er)?|brief|concise|succinct|terse|detail(?:s|ed)?"
    r"|long(?:er)?|in-depth|thorough|verbose|tables?|paragraphs?|prose|format(?:ting)?"
    r"|answers?|repl(?:y|ies)|responses?|summar(?:y|ies)|tl;?dr|markdown|code|examples?"
    r"|emojis?|formal|informal|casual|tone|plain|simple|step[- ]by[- ]step|steps|headings?"
    r"|headers?|numbered|links?|sources?|citations?|explanations?|technical|jargon|words?)\b",
    re.IGNORECASE,
)

_NAME = re.compile(
    r"(?:(?:you can |you may )?call me|my name is|i go by|i(?:'d| would)? prefer (?:to be|being)"
    r" called) (?P<value>[^\W\d_][\w'-]*\.?(?: [^\W\d_][\w'-]*){0,2})",
    re.IGNORECASE,
)
_TIMEZONE = re.compile(
    r"my (?:time ?zone|tz) is (?P<value>[\w/+:. -]{2,40})"
    r"|i(?:'m| am) (?:in|on) (?:the )?(?P<other>[\w/+:. -]{2,40}?) time ?zone",
    re.IGNORECASE,
)
_TEAM = re.compile(
    r"(?:i(?:'m| am) (?:on|in|part of|a member of|with)|i work (?:on|in|for|with))"
    r" (?:the )?(?P<value>[\w&'/ -]{2,40}?) team"
    r"|my team is (?:the )?(?P<other>[\w&'/ -]{2,40}?)(?: team)?",
    re.IGNORECASE,
)
_LANGUAGE = re.compile(
    r"(?:(?:always )?(?:reply|respond|answer|write|talk|speak)(?: to me)? (?:only )?in"
    r"|i(?:'d| would)? prefer (?:answers |replies |responses )?in"
    r"|my (?:preferred )?language is)"
    rf" (?P<value>{_LANGUAGES})",
    re.IGNORECASE,
)
_PREFER = re.compile(
    r"(?:i(?:'d| would)? prefer|my preference is(?: for)?) (?P<value>.{2,})", re.IGNORECASE
)
_LIKE_ANSWERS = re.compile(
    r"i like (?:my |your |the )?(?P<noun>answers|replies|responses) (?P<how>.+)", re.IGNORECASE
)
# "I prefer that one", "I prefer not to say": about something else, or nothing to keep.
_NOT_A_PREFERENCE = re.compile(r"(?:not|that|this|it|them|neither|either)\b", re.IGNORECASE)
_KEEP_ANSWERS = re.compile(
    r"(?P<value>keep (?:your |the |my )?(?:answers|replies|responses|messages) .+)", re.IGNORECASE
)
_ALWAYS = re.compile(rf"always (?P<value>(?:{_VERBS})\b.*)", re.IGNORECASE)
_NEVER = re.compile(rf"(?:never|(?:don't|do not) ever) (?P<value>(?:{_VERBS})\b.*)", re.IGNORECASE)
# Without "always" / "never", an imperative is about this answer unless made durable.
_DONT = re.compile(rf"(?:don't|do not) (?P<value>(?:{_VERBS})\b.*)", re.IGNORECASE)
_DO = re.compile(rf"(?P<value>(?:{_VERBS})\b.*)", re.IGNORECASE)


def detect_preferences(message: str) -> list[Preference]:
    """Every preference stated in `message`, in order (several per message are fine)."""
    found: list[Preference] = []
    for sentence in _sentences(message):
        preference = _match(sentence)
        if preference is not None and not _SECRET.search(preference.value):
            found.append(preference)
    return found


def _match(sentence: _Sentence) -> Preference | None:
    text = sentence.text
    if match := _NAME.fullmatch(text):
        return _name(match.group("value"))
    if match := _TIMEZONE.fullmatch(text):
        if match.group("value"):
            return _value("timezone", match.group("value"))
        zone = match.group("other")  # "I'm in the Pacific time zone"
        return _value("timezone", f"{zone} time" if zone.replace(" ", "").isalpha() else zone)
    if match := _TEAM.fullmatch(text):
        return _value("team", match.group("value") or match.group("other"))
    if match := _LANGUAGE.fullmatch(text):
        return _value("language", match.group("value").capitalize())
    if match := _PREFER.fullmatch(text):
        if _NOT_A_PREFERENCE.match(match.group("value")):
            return None
        # Bounded first: the style words are looked for in a value that can be kept.
        preference = _value("prefers", match.group("value"))
        if preference is not None and _STYLE_WORDS.search(preference.value):
            return Preference("response_style", preference.value)
        return preference
    if match := _LIKE_ANSWERS.fullmatch(text):
        noun, how = match.group("noun"), match.group("how")
        return _value("response_style", f"{how} {noun}" if " " not in how else f"{noun} {how}")
    if match := _KEEP_ANSWERS.fullmatch(text):
        value = match.group("value")
        return _value("response_style", value[:1].lower() + value[1:])
    if match := _ALWAYS.fullmatch(text):
        return _value("always", match.group("value"))
    if match := _NEVER.fullmatch(text):
        return _value("never", match.group("value"))
    if sentence.persistent and (match := _DONT.fullmatch(text)):
        return _value("never", match.group("value"))
    if sentence.persistent and (match := _DO.fullmatch(text)):
        return _value("always", match.group("value"))
    return None


def _name(raw: str) -> Preference | None:
    words = raw.split()
    if any(word.lower() in _NAME_STOPWORDS for word in words):
        return None  # "call me back later", "call me when it's done"
    if raw.islower():
        words = [word.capitalize() for word in words]
    return _value("name", " ".join(words))


def _value(key: str, raw: str) -> Preference | None:
    value = re.sub(r"\s+", " ", raw).strip(" \"'.,;:")
    if not value or len(value) > MAX_VALUE_CHARS:
        return None
    return Preference(key, value)
