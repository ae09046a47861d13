"""English: "call me Sam", "I prefer bullet points", "my timezone is Europe/Paris",
"reply in French", "always cite your sources", "don't use jargon going forward"."""

from __future__ import annotations

import re

from app.learning.preference_detection.grammar import (
    LATIN_NAME,
    OPENER_END,
    Forms,
    Grammar,
    flags,
    phrases,
    word_set,
)

# Verbs that make "always …" / "never …" an instruction to Orion ("never mind" is not).
_VERBS = (
    "use|include|reply|respond|answer|write|give|show|add|cite|put|format|start|end|keep"
    "|mention|ask|send|summari[sz]e|explain|provide|link|sign|call|address|refer|tell|remind"
    "|offer|list|quote|check|double-check|assume|suggest|recommend|translate|spell|round"
    "|convert|apologi[sz]e|be|make|bold|number|sort|skip|attach|tag|avoid|leave|wrap|talk"
    "|speak|greet|open|close|highlight|capitali[sz]e|abbreviate|omit|share|copy|post|reference"
)
_PREFER = r"i(?:'d| would)? prefer"
_ANSWERS = r"(?:answers|replies|responses)"


def _zone(match: re.Match[str]) -> str:
    if match.group("value"):
        return match.group("value")
    zone = match.group("other")  # "I'm in the Pacific time zone"
    return f"{zone} time" if zone.replace(" ", "").isalpha() else zone


def _like_answers(match: re.Match[str]) -> str:
    noun, how = match.group("noun"), match.group("how")
    return f"{how} {noun}" if " " not in how else f"{noun} {how}"


FORMS = (
    Forms()
    .add(
        "name",
        r"(?:(?:you can |you may )?call me|my name is|i go by|i(?:'d| would)? prefer (?:to be"
        rf"|being) called) {LATIN_NAME}",
    )
    .add(
        "timezone",
        r"my (?:time ?zone|tz) is (?P<value>[\w/+:. -]{2,40})"
        r"|i(?:'m| am) (?:in|on) (?:the )?(?P<other>[\w/+:. -]{2,40}?) time ?zone",
        build=_zone,
    )
    .add(
        "team",
        r"(?:i(?:'m| am) (?:on|in|part of|a member of|with)|i work (?:on|in|for|with))"
        r" (?:the )?(?P<value>[\w&'/ -]{2,40}?) team"
        r"|my team is (?:the )?(?P<other>[\w&'/ -]{2,40}?)(?: team)?",
        build=lambda match: match.group("value") or match.group("other"),
    )
    .add(
        "language",
        r"(?:(?:always )?(?:reply|respond|answer|write|talk|speak)(?: to me)? (?:only )?in"
        rf"|{_PREFER} (?:answers |replies |responses )?in"
        r"|my (?:preferred )?language is) (?P<value>[a-z]{2,20})",
    )
    .add("prefers", rf"(?:{_PREFER}|my preference is(?: for)?) (?P<value>.{{2,}})")
    .add(
        "response_style",
        rf"i like (?:my |your |the )?(?P<noun>{_ANSWERS}) (?P<how>.+)",
        build=_like_answers,
    )
    .add(
        "response_style",
        rf"keep (?:your |the |my )?(?:{_ANSWERS}|messages) .+",
        build=lambda match: match.group(0)[:1].lower() + match.group(0)[1:],
    )
    .add("always", rf"always (?P<value>(?:{_VERBS})\b.*)")
    .add("never", rf"(?:never|(?:don't|do not) ever) (?P<value>(?:{_VERBS})\b.*)")
    # Without "always" / "never", an imperative is about this answer unless made durable.
    .add("never", rf"(?:don't|do not) (?P<value>(?:{_VERBS})\b.*)", durable_only=True)
    .add("always", rf"(?P<value>(?:{_VERBS})\b.*)", durable_only=True)
)

ENGLISH = Grammar(
    language="English",
    forms=FORMS,
    # Openers that don't change what the sentence says. "From now on" and friends also
    # make an instruction durable (see `durable`).
    openers=flags(
        r"(?:please|also|actually|and|oh|ok|okay|so|btw|by the way|fyi|just so you know"
        r"|for the record|for future reference|from now on|going forward|in (?:the )?future"
        rf"|remember(?: that)?|note(?: that)?|just|hey|hi|no(?=,)){OPENER_END}"
    ),
    fillers=phrases(
        """
        please thanks thank_you from_now_on going_forward in_future in_the_future for_future
        for_the_future if_possible if_you_can anymore again
        """
    ),
    durable=flags(
        r"\b(?:from now on|going forward|in (?:the )?future|for (?:the )?future|anymore)\b"
    ),
    reported=r"\b(?:said|says|told|tells|according to)\b",
    marks=flags(r"\b(?:the|your|my|to|and|of|with|in)\b"),
    not_names=word_set(
        """
        a an the back later when whenever if after before at on
        in by to up out about again now soon tomorrow today tonight
        asap anytime sometime once maybe not no it that this what you
        me crazy names anything whatever
        """
    ),
    # "I prefer that one", "I prefer not to say": about something else, or nothing to keep.
    not_preferred=flags(r"(?:not|that|this|it|them|neither|either)\b"),
    style=flags(
        r"\b(?:bullet(?:s|ed)?|lists?|short(?:er)?|brief|concise|succinct|terse"
        r"|detail(?:s|ed)?|long(?:er)?|in-depth|thorough|verbose|tables?|paragraphs?|prose"
        r"|format(?:ting)?|answers?|repl(?:y|ies)|responses?|summar(?:y|ies)|tl;?dr|markdown"
        r"|code|examples?|emojis?|formal|informal|casual|tone|plain|simple|step[- ]by[- ]step"
        r"|steps|headings?|headers?|numbered|links?|sources?|citations?|explanations?"
        r"|technical|jargon|words?)\b"
    ),
)
