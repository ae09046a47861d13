"""The memory layout (docs/interface.md) as the bucket shows it: what a returning person's thread
start and their first message leave behind. Every object written is the person's (in their
home, so their whole memory is found and erased from them alone) or one of Orion's event
claims; nothing lands in the layout Orion wrote up to 2026-11-28 or in another person's home."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from app.memory.homes import person, preferences_key
from tests import layout
from tests.e2e import conversation
from tests.e2e.memory_bucket import GLOBAL_KEY, Bucket
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.claude_script import ScriptItem, text
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, CHANNEL = "U0RHEA", "D0RHEA"
OTHER = "U0OSCAR"
PREFERENCES = {"response_style": "bullet points", "timezone": "Asia/Tokyo"}
EARLIER = "1764300000.000100"
QUESTION = "Which cluster do we deploy the billing service to?"
ANSWER = "The billing service deploys to the heron cluster, on Thursdays, after the staging run."
SUMMARY = "# Billing deploys\nRhea asked where billing deploys; Orion said the heron cluster."

# What Orion wrote up to 2026-11-28 : an upgraded Orion
# reads it (docs/operations.md, "Upgrading"), never adds to it.
LEGACY_PREFIXES = ("users/", "sessions/", "conversations/", "threads/", "undo/")


def _changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    """Keys created or rewritten between two listings of the bucket's generations."""
    return {key for key, generation in after.items() if before.get(key) != generation}


def _whose(keys: set[str]) -> dict[str, set[str]]:
    home = person(USER)
    groups: dict[str, set[str]] = {"person": set(), "claims": set(), "else": set()}
    for key in keys:
        if key.startswith(home.prefix):
            groups["person"].add(key)
        elif key.startswith("events/"):
            groups["claims"].add(key)
        else:
            groups["else"].add(key)
    return groups


def _summaries(claude: FakeClaude, orion: OrionServer) -> None:
    model = orion.settings.summary_model

    def respond(body: dict[str, Any]) -> ScriptItem | None:
        return text(SUMMARY) if body["model"] == model else None

    claude.responder = respond


def test_a_returning_persons_thread_start_and_message_write_only_into_their_home(
    orion_on_bucket: Callable[..., OrionServer],
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(preferences_key(USER), json.dumps(PREFERENCES))
    bucket.write(GLOBAL_KEY, "Billing deploys on Thursdays.")
    for key, content in layout.history(
        [layout.conversation_record(USER, EARLIER, channel_id=CHANNEL, summary="Old talk.")]
    ).items():
        bucket.write(key, content)
    bucket.write(preferences_key(OTHER), json.dumps({"response_style": "long"}))
    orion = orion_on_bucket()
    _summaries(claude, orion)
    untouched = {preferences_key(USER), GLOBAL_KEY, preferences_key(OTHER)}

    before = bucket.generations()
    thread_ts, greeting = conversation.open_thread(orion, slack, USER, CHANNEL)
    orion.wait_idle()
    started = bucket.generations()

    assert greeting.startswith("Welcome back")
    record_key = layout.conversation_key(USER, thread_ts)
    written = _whose(_changed(before, started))
    assert written["else"] == set(), "a thread start writes nothing outside the person's home"
    assert record_key in written["person"], "the thread start records the conversation"
    record = json.loads(bucket.read(record_key) or "{}")
    assert record["owner"]["user"] == USER
    assert "Asia/Tokyo" not in json.dumps(record), "no copy of the preferences"
    assert not written["person"] & untouched

    claude.reply(ANSWER)
    conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, QUESTION)
    conversation.wait_for_answer(slack, CHANNEL, thread_ts, ANSWER)
    orion.wait_idle()
    answered = bucket.generations()

    written = _whose(_changed(started, answered))
    assert written["else"] == set(), "a message writes nothing outside the person's home"
    assert not written["person"] & untouched
    assert layout.messages_in(bucket.read(record_key)) == [QUESTION, ANSWER]
    # The session summary of the turn, kept in the person's home for the next greeting.
    profile = bucket.read(person(USER).profile_key)
    assert layout.summary_of_latest(profile) == SUMMARY.splitlines()[1]

    everything = set(answered)
    assert not any(key.startswith(LEGACY_PREFIXES) for key in everything)
    assert not any(key.startswith(person(OTHER).prefix) for key in _changed(before, answered))
