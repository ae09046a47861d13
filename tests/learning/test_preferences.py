"""Preferences stated in passing: what is detected, how it merges, how it is stored."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import pytest

from app.learning.erasure import forget_preference
from app.learning.preference_detection import detect_preferences
from app.learning.preferences import (
    MAX_RULES,
    Learned,
    Preference,
    merge_preferences,
    parse_preferences,
    save_preferences,
)
from app.memory.homes import preferences_key
from app.storage.store import ObjectStore
from tests.backends import USER, Backend

KEY = preferences_key(USER)

STATEMENTS = [
    # (message, what is captured)
    ("I prefer bullet points", {"response_style": "bullet points"}),
    ("I'd prefer shorter answers.", {"response_style": "shorter answers"}),
    (
        "Please remember: I prefer short answers with bullet points.",
        {"response_style": "short answers with bullet points"},
    ),
    ("I like my answers short", {"response_style": "short answers"}),
    ("Keep your answers brief.", {"response_style": "keep your answers brief"}),
    ("I prefer Python over Go.", {"prefers": "Python over Go"}),
    ("Call me Sam", {"name": "Sam"}),
    ("please call me sam.", {"name": "Sam"}),
    ("You can call me Dr. Okafor", {"name": "Dr. Okafor"}),
    ("My name is Ana Lucia", {"name": "Ana Lucia"}),
    ("I prefer to be called Sam", {"name": "Sam"}),
    ("My timezone is Europe/Paris", {"timezone": "Europe/Paris"}),
    ("my time zone is UTC+2", {"timezone": "UTC+2"}),
    ("I'm in the Pacific time zone", {"timezone": "Pacific time"}),
    ("I'm on the data platform team", {"team": "data platform"}),
    ("I’m on the Growth team.", {"team": "Growth"}),
    ("I work in the finance team", {"team": "finance"}),
    ("My team is Payments", {"team": "Payments"}),
    ("Reply in French please", {"language": "French"}),
    ("Always respond in german.", {"language": "German"}),
    ("I'd prefer answers in Japanese", {"language": "Japanese"}),
    ("Always use metric units.", {"always": "use metric units"}),
    ("Please always cite your sources", {"always": "cite your sources"}),
    ("Never use emoji", {"never": "use emoji"}),
    ("Don't ever apologise", {"never": "apologise"}),
    ("From now on, use British spelling.", {"always": "use British spelling"}),
    ("Don't use jargon going forward.", {"never": "use jargon"}),
    (
        "Hi! I work on the search team. Call me Jo. What's the status of the launch?",
        {"team": "search", "name": "Jo"},
    ),
]

NOT_STATEMENTS = [
    # Questions.
    "Do you prefer tabs or spaces?",
    "Which do I prefer, do you remember?",
    "Should I always use metric units?",
    "Can you call me Sam?",
    # Stories, reported speech, sentences that merely contain the words.
    "I never said that, but he kept insisting.",
    "Yesterday my manager told me I never said that in the meeting.",
    "He said: always check the numbers twice.",
    "We always use Jira for this.",
    "In the meeting I said I prefer option B.",
    "Never mind.",
    "Always happy to help!",
    "I'm on the fence about this.",
    # "Call me" that is not a name.
    "Call me when the report is ready.",
    "Call me back tomorrow",
    # One-off instructions, about this answer only.
    "Use bullet points.",
    "Don't use jargon.",
    "Reply in bullet points",
    # Nothing to keep, and never secrets.
    "I prefer not to say.",
    "I prefer that one.",
    "My password is hunter2",
    "Always use the token xoxb-123 for the API",
    "",
]


@pytest.mark.parametrize(("message", "expected"), STATEMENTS)
def test_statements_are_captured(message: str, expected: dict[str, str]) -> None:
    found = detect_preferences(message)
    assert {p.key: p.value for p in found} == expected
    assert len(found) == len(expected)


@pytest.mark.parametrize("message", NOT_STATEMENTS)
def test_everything_else_is_left_alone(message: str) -> None:
    assert detect_preferences(message) == []


def test_a_later_statement_on_the_same_topic_replaces_the_earlier_one() -> None:
    first = merge_preferences(None, detect_preferences("Call me Sam. I prefer bullet points."))
    second = merge_preferences(first, detect_preferences("I prefer numbered lists. Call me Sammy"))
    assert json.loads(second or "") == {"name": "Sammy", "response_style": "numbered lists"}


def test_rules_accumulate_and_a_contrary_rule_withdraws_the_old_one() -> None:
    stored = merge_preferences(None, detect_preferences("Always use metric units."))
    stored = merge_preferences(stored, detect_preferences("Always cite sources. Never use emoji."))
    assert json.loads(stored or "") == {
        "always": "use metric units; cite sources",
        "never": "use emoji",
    }
    stored = merge_preferences(stored, detect_preferences("Never use metric units."))
    assert json.loads(stored or "") == {
        "always": "cite sources",
        "never": "use emoji; use metric units",
    }
    many = [Preference("always", f"do thing {n}") for n in range(MAX_RULES + 2)]
    rules = json.loads(merge_preferences(stored, many) or "")["always"].split("; ")
    assert rules == [f"do thing {n}" for n in range(2, MAX_RULES + 2)]


def test_other_keys_are_kept_and_a_repeat_changes_nothing() -> None:
    current = json.dumps({"favourite_editor": "vim", "name": "Sam"})
    assert merge_preferences(current, detect_preferences("Call me Sam.")) == current
    assert merge_preferences(current, []) == current
    merged = json.loads(merge_preferences(current, detect_preferences("I'm on the ML team")) or "")
    assert merged == {"favourite_editor": "vim", "name": "Sam", "team": "ML"}


def test_a_file_that_is_not_an_object_is_not_overwritten() -> None:
    with pytest.raises(ValueError):
        merge_preferences("[1, 2]", detect_preferences("Call me Sam"))
    with pytest.raises(ValueError):
        merge_preferences("not json", detect_preferences("Call me Sam"))


async def test_preferences_land_in_the_persons_file(store: ObjectStore, backend: Backend) -> None:
    assert await save_preferences(store, USER, detect_preferences("Call me Sam.")) is True
    assert await save_preferences(store, USER, detect_preferences("Call me Sam.")) is False
    assert await save_preferences(store, USER, []) is False
    assert [(p.key, p.value) for p in parse_preferences(backend.raw_read(KEY))] == [("name", "Sam")]
    assert backend.raw_names() == [KEY]


async def test_concurrent_statements_are_both_kept(store: ObjectStore, backend: Backend) -> None:
    # Two messages, two instances, the same file: optimistic concurrency keeps both.
    statements = ["Call me Sam.", "My timezone is Europe/Paris.", "I'm on the data team."]
    await asyncio.gather(
        *(save_preferences(store, USER, detect_preferences(s)) for s in statements)
    )
    stored = json.loads(backend.raw_read(KEY) or "")
    assert sorted(stored.pop("_learned")) == ["name", "team", "timezone"]
    assert stored == {"name": "Sam", "timezone": "Europe/Paris", "team": "data"}


async def test_a_contradicting_preference_replaces_the_old_one_with_its_time_and_thread(
    store: ObjectStore, backend: Backend
) -> None:
    first = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
    later = datetime(2026, 5, 4, 10, 12, tzinfo=UTC)
    found = detect_preferences("Please answer in French.")
    await save_preferences(store, USER, found, channel="D0A", thread_ts="1.1", now=first)
    found = detect_preferences("Please answer in German.")
    await save_preferences(store, USER, found, channel="D0A", thread_ts="2.2", now=later)

    [language] = parse_preferences(backend.raw_read(KEY))
    assert (language.key, language.value) == ("language", "German"), "one value: the latest"
    assert language.learned == Learned(later, "D0A", "2.2", said_in="English")


async def test_forgetting_one_preference_keeps_the_others(
    store: ObjectStore, backend: Backend
) -> None:
    await save_preferences(store, USER, detect_preferences("Call me Sam. Answer in French."))
    assert await forget_preference(store, USER, "language")
    assert not await forget_preference(store, USER, "language"), "nothing left to forget"
    assert [(p.key, p.value) for p in parse_preferences(backend.raw_read(KEY))] == [("name", "Sam")]
    assert "language" not in (backend.raw_read(KEY) or ""), "its record went with it"
