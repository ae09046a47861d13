"""Preferences said in passing in any of Orion's languages, end to end: "Appelle-moi
Camille" in one thread, and the next thread greets Camille in French; "Nenn mich lieber
Cami" later, and the one after greets Cami in German; the Home tab shows the current name
with when and in which conversation it was said.

Through the real peers: signed events into Orion's HTTP app, the fake Slack (the thread,
views.publish), the fake Claude, the GCS emulator. The summary model fails whenever it is
asked: what is heard is heard without a model, and the greeting is Orion's own words in
the person's language, not words a model wrote.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests import layout
from tests.e2e import conversation
from tests.e2e.memory_bucket import Bucket
from tests.e2e.test_memory_controls import WORKSPACE, open_home, section_with
from tests.fakes import claude_script as script
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, DM = "U0CAMILLE", "D0CAMILLE"
ANSWER = "(fake claude) noted"


def summaries_fail(orion: OrionServer, claude: FakeClaude) -> None:
    def respond(body: dict[str, Any]) -> script.ScriptItem:
        if body["model"] == orion.settings.summary_model:
            return script.Failure(status=500, error_type="api_error", message="down")
        return script.text(ANSWER)

    claude.responder = respond


def say_in_a_new_thread(orion: OrionServer, slack: FakeSlack, text: str) -> tuple[str, str]:
    """Open a thread, say `text` in it and wait for the answer: (the greeting, the thread)."""
    thread_ts, greeting = conversation.open_thread(orion, slack, USER, DM)
    conversation.post_user_message(orion, slack, USER, DM, thread_ts, text)
    conversation.wait_for_answer(slack, DM, thread_ts, ANSWER)
    return greeting, thread_ts


def name_becomes(bucket: Bucket, name: str) -> dict[str, Any]:
    key = layout.preferences_key(USER)
    return json.loads(bucket.wait_for(key, lambda content: json.loads(content).get("name") == name))


def test_a_name_said_in_french_greets_in_french_and_a_correction_in_german_replaces_it(
    orion_on_bucket: Callable[..., OrionServer],
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    orion = orion_on_bucket()
    summaries_fail(orion, claude)

    first, _ = say_in_a_new_thread(orion, slack, "Bonjour ! Appelle-moi Camille.")
    assert first.startswith("Hi, I'm Orion."), "a first-time person"
    stored = name_becomes(bucket, "Camille")
    assert stored["_learned"]["name"]["said_in"] == "French"

    # The next thread: greeted by name, in French, with no model call at thread start.
    asked = len(claude.requests)
    greeting, corrected_in = say_in_a_new_thread(orion, slack, "Nenn mich lieber Cami.")
    assert greeting == "Bon retour, Camille ! Comment puis-je vous aider aujourd'hui ?"
    assert [r for r in claude.requests[asked:] if "Bon retour" in json.dumps(r)] == []
    stored = name_becomes(bucket, "Cami")
    assert stored["name"] == "Cami" and "Camille" not in json.dumps(stored), "latest wins"
    assert stored["_learned"]["name"]["thread"] == corrected_in

    # The one after: the correction, in the language it was made in.
    _, greeting = conversation.open_thread(orion, slack, USER, DM)
    assert greeting == "Willkommen zurück, Cami! Wie kann ich dir heute helfen?"

    # The Home tab shows the current name, when it was said and in which conversation.
    view = open_home(orion, slack, USER, DM)
    shown = section_with(view, "*Name*")
    assert "Cami" in shown and "Camille" not in shown
    assert f"{WORKSPACE}/archives/{DM}/p{corrected_in.replace('.', '')}" in shown
    assert "Learned <!date^" in shown
