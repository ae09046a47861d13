"""Slack as the attacker, with a message's later life: an edit (`message_changed`) or deletion
(`message_deleted`) in a person's DM thread, including one that names another person in its
fields, is not a person writing. Orion answers none of them, asks Claude nothing, writes
nothing; the next real message in the thread is answered as before.

Tried in round 9, in both Slack experiences: held (the listeners take only messages without
a subtype, or file shares); kept so it keeps holding.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e import both_experiences, conversation
from tests.e2e.memory_bucket import Bucket
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

experience = both_experiences.experience
slack = both_experiences.slack

OTTO, OTTO_DM = "U0OTTO", "D0OTTO"
MIRA = "U0MIRA"


@pytest.fixture
def orion(
    orion_on_bucket: Callable[..., OrionServer], claude: FakeClaude, experience: str
) -> OrionServer:
    server = orion_on_bucket(slack_experience=experience)
    summary_model = server.settings.summary_model
    claude.responder = lambda body: (
        script.text("# Plans\nOtto asked for the plan.") if body["model"] == summary_model else None
    )
    return server


def _start(orion: OrionServer, slack: FakeSlack, experience: str, text: str) -> str:
    if experience == "assistant":
        thread_ts, _ = conversation.open_thread(orion, slack, OTTO, OTTO_DM)
        conversation.post_user_message(orion, slack, OTTO, OTTO_DM, thread_ts, text)
        return thread_ts
    thread_ts = slack.add_user_message(OTTO_DM, None, OTTO, text)
    assert orion.post_event(events.top_level_dm(OTTO, OTTO_DM, text, ts=thread_ts)).is_success
    return thread_ts


def _later_life(thread_ts: str, ts: str) -> list[dict[str, Any]]:
    """An edit and a deletion of Otto's message, as Slack sends them, and forged ones that
    name Mira at the top level, where a person's own message names its author."""
    edited = {"type": "message", "user": OTTO, "text": "edited", "ts": ts, "thread_ts": thread_ts}
    common = {"type": "message", "channel": OTTO_DM, "channel_type": "im", "event_ts": ts}
    shapes = [
        {**common, "subtype": "message_changed", "hidden": True, "message": edited},
        {**common, "subtype": "message_deleted", "hidden": True, "deleted_ts": ts},
        {**common, "subtype": "message_changed", "user": MIRA, "text": "forged", "ts": ts},
        {**common, "subtype": "message_deleted", "user": MIRA, "thread_ts": thread_ts, "ts": ts},
        {**common, "subtype": "message_replied", "user": MIRA, "thread_ts": thread_ts, "ts": ts},
    ]
    for shape in shapes:
        shape.setdefault("previous_message", {"user": OTTO, "text": "first", "ts": ts})
    return [events.event_callback(shape) for shape in shapes]


def test_edits_and_deletions_in_a_dm_thread_are_answered_by_nothing(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket, experience: str
) -> None:
    claude.reply("Here is the plan.")
    thread_ts = _start(orion, slack, experience, "What is the plan?")
    conversation.wait_for_answer(slack, OTTO_DM, thread_ts, "Here is the plan.")
    orion.wait_idle()
    asked, said = len(claude.requests), len(slack.bot_messages(OTTO_DM, thread_ts))
    kept = {name: bucket.read(name) for name in bucket.names()}

    for payload in _later_life(thread_ts, thread_ts):
        assert orion.post_event(payload).status_code == 200
    orion.wait_idle()  # counted from each acknowledgement: every listener has ended

    assert len(claude.requests) == asked
    assert len(slack.bot_messages(OTTO_DM, thread_ts)) == said
    assert {name: bucket.read(name) for name in bucket.names()} == kept
    # The thread goes on: Otto's next message is answered, with what was said before.
    claude.reply("Still the plan.")
    conversation.post_user_message(orion, slack, OTTO, OTTO_DM, thread_ts, "Still?")
    conversation.wait_for_answer(slack, OTTO_DM, thread_ts, "Still the plan.")
    assert "What is the plan?" in json.dumps(claude.requests[-1]["messages"])
