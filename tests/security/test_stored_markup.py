"""Stored memory cannot make Orion's greeting carry Slack markup.

A name or preference a person (or Claude, prompt-injected by a pasted document) stored is
shown in every later greeting: a stored `<https://…|Verify your account>` would become a
link posted by Orion, `<!channel>` a mention. The thread opens through the real Orion HTTP
app; the greeting the fake Slack received shows the text, escaped, and no link.
"""

from __future__ import annotations

import json
from pathlib import Path

from app.memory.homes import preferences_key
from tests.e2e.conversation import open_thread
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, DM = "U0MARK", "D0MARK"
PHISHING = "<https://evil.example/login|Verify your account>"


def test_a_stored_name_and_preference_with_slack_markup_are_shown_as_text(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    preferences = memory_dir / preferences_key(USER)
    preferences.parent.mkdir(parents=True)
    preferences.write_text(json.dumps({"name": PHISHING, "team": "<!channel> & co"}))

    _, greeting = open_thread(orion, slack, USER, DM)

    assert "<https://" not in greeting and "<!channel>" not in greeting
    assert "&lt;https://evil.example/login|Verify your account&gt;" in greeting
    assert "&lt;!channel&gt; &amp; co" in greeting
