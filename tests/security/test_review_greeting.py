"""Attacker's review of the greeting in the person's language: a stored name (written by
the person, or by a prompt-injected Claude through the memory tool) must not turn the rest
of Orion's greeting around. An unterminated right-to-left override (U+202E) or isolate
in a name makes Slack show everything after it reversed: "Welcome back, Eve‮! How can I
help today?" reads backwards from the name on. The thread opens through the real Orion
HTTP app; the greeting the fake Slack received holds no direction control."""

from __future__ import annotations

import json
import re
from pathlib import Path

from app.memory.homes import preferences_key
from tests.e2e.conversation import open_thread
from tests.e2e.home import open_home, shown
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, DM = "U0BIDI", "D0BIDI"
DIRECTION_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def test_a_stored_name_with_direction_overrides_cannot_reverse_the_greeting(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    preferences = memory_dir / preferences_key(USER)
    preferences.parent.mkdir(parents=True)
    stored = {"name": "Eve\u202e<@U0BOSS>", "language": "Japanese", "tone": "\u2067formal"}
    preferences.write_text(json.dumps(stored))

    _, greeting = open_thread(orion, slack, USER, DM)

    assert DIRECTION_CONTROLS.search(greeting) is None, repr(greeting)
    assert "Eve&lt;@U0BOSS&gt;さん" in greeting, "greeted by name, in Japanese, escaped"


def test_a_stored_name_with_direction_overrides_cannot_reverse_the_home_tab(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    # The same stored words on the Home tab: every stored value is shown through one escape.
    preferences = memory_dir / preferences_key(USER)
    preferences.parent.mkdir(parents=True)
    preferences.write_text(json.dumps({"name": "Eve\u202e<@U0BOSS>", "tone": "\u2067formal"}))

    view = shown(open_home(orion, slack, USER, DM))

    assert DIRECTION_CONTROLS.search(view) is None, repr(view)
    assert "Eve<@U0BOSS>" in view and "formal" in view, "shown as the text it is"
