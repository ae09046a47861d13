"""Hostile text against preference detection in every language: 40,000-character messages
shaped against the new patterns (tests/security/preference_shapes.py) read a bounded prefix
and give bounded results; a hostile stored preference file still greets in one short line.

How fast is measured by bench/preference_languages.py; nothing here is timed. A pattern
that backtracked over a 40,000-character run would make these tests never end.
"""

from __future__ import annotations

import json

import pytest

from app.learning.language_names import canonical_language
from app.learning.preference_detection import MAX_SCANNED_CHARS, MAX_SENTENCES, detect_preferences
from app.learning.preferences import MAX_VALUE_CHARS, Preference, spoken_language
from app.slack.conversation.greeting import greeting_for, messages_tab_prompts
from tests.security.preference_shapes import PREFERENCE_SHAPES, SLACK_LIMIT, filled

AFTER_THE_PREFIX = "\nAppelle-moi Mallory. 叫我小明。Nenn mich Eve."


@pytest.fixture(params=list(PREFERENCE_SHAPES))
def shape(request: pytest.FixtureRequest) -> str:
    text = PREFERENCE_SHAPES[request.param]
    assert len(text) == SLACK_LIMIT
    return text


def test_detection_reads_only_a_bounded_prefix_of_any_shape(shape: str) -> None:
    found = detect_preferences(shape)

    # Whatever follows the prefix, even preferences in three languages, changes nothing.
    assert found == detect_preferences(shape[:MAX_SCANNED_CHARS] + AFTER_THE_PREFIX)
    assert len(found) <= MAX_SENTENCES
    assert all(len(p.value) <= MAX_VALUE_CHARS for p in found)


def test_a_prefix_read_whole_gives_bounded_results(shape: str) -> None:
    # Just under the prefix: every sentence is read, the last one included.
    found = detect_preferences(shape[: MAX_SCANNED_CHARS - 1])

    assert len(found) <= MAX_SENTENCES
    assert all(len(p.value) <= MAX_VALUE_CHARS for p in found)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("sentence after sentence, Chinese", Preference("name", "小明")),
        ("sentence after sentence, German", Preference("name", "Cami")),
    ],
)
def test_sentences_are_read_up_to_the_bound_in_any_script(name: str, expected: Preference) -> None:
    assert detect_preferences(PREFERENCE_SHAPES[name]) == [expected] * MAX_SENTENCES


@pytest.mark.parametrize(
    "opening",
    ["Appelle-moi Camille. ", "カミーユと呼んでください。", "Nenn mich Camille. ", "叫我小明。"],
)
def test_a_preference_before_a_hostile_run_is_still_heard(opening: str) -> None:
    found = detect_preferences(opening + filled("。！？", SLACK_LIMIT - len(opening)))

    assert [p.key for p in found] == ["name"]


def test_a_hostile_stored_file_greets_in_one_short_line() -> None:
    hostile = filled("français ")
    learned = {"name": {"at": "2026-05-01T09:00:00Z", "said_in": hostile}}
    stored = json.dumps({"name": hostile, "language": hostile, "_learned": learned})

    assert canonical_language(hostile) is None
    assert spoken_language(stored) is None  # no language Orion knows: English
    greeting = greeting_for(stored)
    title, _ = messages_tab_prompts(stored)
    assert greeting.startswith("Welcome back, français")
    assert "\n" not in greeting and len(greeting) <= 2 * MAX_VALUE_CHARS + 200
    assert "\n" not in title and len(title) <= MAX_VALUE_CHARS + 50
