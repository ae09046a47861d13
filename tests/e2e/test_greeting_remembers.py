"""A greeting that shows Orion remembers: the person's last topic, in their language, by
name, prepared at turn end, with no model call at thread start and nothing stale."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.learning.welcome import Welcome
from tests import layout
from tests.e2e.conversation import open_thread, post_user_message, wait_for_answer
from tests.fakes import claude_script as script
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, CHANNEL = "U0LEA", "D0LEA"
PREFERENCES = {"name": "Léa", "language": "French"}
QUESTION = "Peux-tu revoir le budget T3 avec moi ? Nous sommes 20 % au-dessus du plan."
ANSWER = "Bien sûr : commençons par les coûts du cloud, qui expliquent l'essentiel de l'écart."
SUMMARY = (
    "# Revue du budget T3\n"
    "Léa revoit le budget T3, 20 % au-dessus du plan ; les coûts cloud d'abord.\n"
    "Welcome: Bon retour, Léa ! On reprend la revue du budget T3 ?\n"
    "Next: Reprendre la revue du budget T3"
)


def seed(memory_dir: Path, key: str, content: str) -> None:
    path = memory_dir / key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")


def converse(orion: OrionServer, slack: FakeSlack, claude: FakeClaude) -> None:
    def respond(body: dict[str, Any]) -> script.ScriptItem:
        is_summary = body["model"] == orion.settings.summary_model
        return script.text(SUMMARY if is_summary else ANSWER)

    claude.responder = respond
    thread_ts, _ = open_thread(orion, slack, USER, CHANNEL)
    post_user_message(orion, slack, USER, CHANNEL, thread_ts, QUESTION)
    wait_for_answer(slack, CHANNEL, thread_ts, ANSWER)


def test_the_next_thread_welcomes_the_person_back_to_their_topic_in_their_language(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    seed(memory_dir, layout.preferences_key(USER), json.dumps(PREFERENCES))
    converse(orion, slack, claude)
    profile = memory_dir / layout.person(USER).profile_key
    slack.wait_for(
        lambda: profile.is_file() and layout.welcome_in(profile.read_text()) is not None,
        what="the welcome prepared at turn end",
    )
    asked = len(claude.requests)

    thread_ts, greeting = open_thread(orion, slack, USER, CHANNEL)

    assert greeting == "Bon retour, Léa ! On reprend la revue du budget T3 ?"
    [prompts] = slack.wait_for(lambda: slack.suggested_prompts(CHANNEL, thread_ts))
    assert prompts.prompts[0] == {
        "title": "Reprendre la revue du budget T3",
        "message": "Reprendre la revue du budget T3",
    }
    assert len(claude.requests) == asked, "no model call at thread start"


def test_a_welcome_older_than_the_retention_window_is_not_mentioned(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    seed(memory_dir, layout.preferences_key(USER), json.dumps(PREFERENCES))
    stale = datetime.now(UTC) - timedelta(days=40)
    old = Welcome(
        thread_ts="1700000000.000100",
        topic="Revue du budget T3",
        updated=stale,
        greeting="Bon retour, Léa ! On reprend la revue du budget T3 ?",
        next_step="Reprendre la revue du budget T3",
    )
    seed(memory_dir, layout.person(USER).profile_key, layout.profile(welcome=old, at=stale))

    thread_ts, greeting = open_thread(orion, slack, USER, CHANNEL)

    assert greeting.startswith("Bon retour, Léa !") and "budget" not in greeting
    [prompts] = slack.wait_for(lambda: slack.suggested_prompts(CHANNEL, thread_ts))
    assert not any("budget" in p["title"] for p in prompts.prompts)


def test_a_first_time_person_gets_the_plain_welcome(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    _, greeting = open_thread(orion, slack, USER, CHANNEL)

    assert greeting.startswith("Hi, I'm Orion.")
    assert claude.requests == []
