"""Forget reaches every copy, at once (issue 36, item 2).

Zoé tells Orion her name (a preference), Claude keeps a note about her, and the
conversation is summarised with a welcome back to it; a second thread is open meanwhile.
Then she forgets one of the three — on her Home tab, or by asking Claude in the open
thread — and every object in the bucket is read: nothing holds it any more, but for the
conversation it was said in (for a preference: what she said stays that conversation's
until she forgets it). The next message in the thread already open, the next thread's
greeting and prompts, and the next turn's request to Claude never use it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from app.memory.homes import person
from app.slack.home.memory_view import (
    ACTION_FORGET_CONVERSATION,
    ACTION_FORGET_NOTE,
    ACTION_FORGET_PREFERENCE,
)
from tests.e2e import conversation
from tests.e2e.memory_bucket import Bucket
from tests.e2e.test_memory_controls import click, everything_in, open_home, shown
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, orion_servers

USER, DM = "U0ZOE", "D0ZOE"
NAME = "Zebedee"  # the preference
NOTE_MARK = "NOTE-7731"  # only in the note
NOTE_FILE = "lawyers.md"
TOPIC = "divorce"  # only in the first conversation (said, summarised, welcomed back to)
FIRST = (
    f"Call me {NAME}. I'm choosing a {TOPIC} lawyer this week and need to compare "
    "three offices by fees and availability."
)
SUMMARY = (
    f"# Choosing a {TOPIC} lawyer\nThe person compares three offices for a {TOPIC} case.\n"
    f"Welcome: Welcome back {NAME}, ready to pick your {TOPIC} lawyer?\n"
    f"Next: Pick the {TOPIC} lawyer"
)
OTHER_SUMMARY = (
    "# Team offsite\nThe person plans the team offsite.\nWelcome: Welcome back!\n"
    "Next: Plan the offsite"
)
SECOND = "Separately: let's plan the team offsite for next month, for twelve people please."

CASES = [
    ("assistant", "home"),
    ("assistant", "claude"),
    ("agent", "home"),
]


@pytest.fixture(params=CASES, ids=["-".join(case) for case in CASES])
def case(request: pytest.FixtureRequest) -> tuple[str, str]:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def slack(case: tuple[str, str]) -> Iterator[FakeSlack]:
    with FakeSlack(agent_view=case[0] == "agent") as fake:
        yield fake


@pytest.fixture
def orion(
    gcs_proxy: Any, slack: FakeSlack, claude: FakeClaude, gcs_bucket: str, case: tuple[str, str]
) -> Iterator[OrionServer]:
    with orion_servers(slack, claude, gcs_memories_bucket=gcs_bucket) as start:
        yield start(slack_experience=case[0])


def script_claude(orion: OrionServer, claude: FakeClaude) -> None:
    """Claude keeps a note in the first conversation (and then answers as scripted); the
    summary model summarises each conversation with a welcome back to it."""
    summary_model = orion.settings.summary_model

    def respond(body: dict[str, Any]) -> script.ScriptItem | None:
        if body["model"] == summary_model:
            return script.text(SUMMARY if TOPIC in json.dumps(body) else OTHER_SUMMARY)
        if last_user_text(body).endswith(FIRST) and not conversation.tool_results(body):
            note = f"Compares three offices. {NOTE_MARK}"
            path = f"/memories/users/{USER}/{NOTE_FILE}"
            return script.tool_use("memory", {"command": "create", "path": path, "file_text": note})
        return None

    claude.responder = respond


def start(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, experience: str, text: str
) -> tuple[str, str]:
    """A new conversation whose first message is `text`; its thread and greeting ("" in
    agent_view, which has none), once answered."""
    greeting = ""
    claude.reply("Noted.")
    if experience == "assistant":
        thread_ts, greeting = conversation.open_thread(orion, slack, USER, DM)
        conversation.post_user_message(orion, slack, USER, DM, thread_ts, text)
    else:
        thread_ts = slack.add_user_message(DM, None, USER, text)
        assert orion.post_event(events.top_level_dm(USER, DM, text, ts=thread_ts)).is_success
    slack.wait_for(
        lambda: "Noted." in conversation.finished(slack, DM, thread_ts),
        timeout=conversation.FIRST_EVENT_TIMEOUT,
        what="the answer",
    )
    orion.wait_idle()
    return thread_ts, greeting


def say(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    thread_ts: str,
    text: str,
    *,
    scripted: bool = False,
) -> None:
    """`text` in the thread, answered "Noted." (after what is `scripted` already)."""
    if not scripted:
        claude.reply("Noted.")
    before = conversation.finished(slack, DM, thread_ts).count("Noted.")
    ts = slack.add_user_message(DM, thread_ts, USER, text)
    event = events.user_message_in_thread(USER, DM, thread_ts, text, ts=ts)
    assert orion.post_event(event).is_success
    slack.wait_for(
        lambda: conversation.finished(slack, DM, thread_ts).count("Noted.") > before,
        timeout=30,
        what="the answer",
    )
    orion.wait_idle()


def request_for(claude: FakeClaude, orion: OrionServer, text: str) -> dict[str, Any]:
    [request, *_] = [
        r for r in conversation.main_requests(claude, orion) if last_user_text(r).endswith(text)
    ]
    return request


@pytest.mark.parametrize("kind", ["preference", "note", "conversation"])
def test_forgetting_one_thing_leaves_no_copy_and_no_turn_uses_it(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    case: tuple[str, str],
    kind: str,
) -> None:
    experience, via = case
    script_claude(orion, claude)
    first, _ = start(orion, slack, claude, experience, FIRST)
    home = person(USER)
    bucket.wait_for(home.profile_key, lambda content: first in content)
    # The second conversation is open before the forgetting; its greeting welcomed her back.
    second, greeting = start(orion, slack, claude, experience, SECOND)
    if experience == "assistant":
        assert NAME in greeting and TOPIC in greeting, "copies exist before"
    before = everything_in(bucket)
    mark = {"preference": NAME, "note": NOTE_MARK, "conversation": TOPIC}[kind]
    assert any(mark in content for content in before.values())

    if via == "home":
        view = open_home(orion, slack, USER, DM)
        action, value = {
            "preference": (ACTION_FORGET_PREFERENCE, "name"),
            "note": (ACTION_FORGET_NOTE, NOTE_FILE),
            "conversation": (ACTION_FORGET_CONVERSATION, first),
        }[kind]
        after_view = click(orion, slack, USER, view, action, value)
        assert mark not in shown(after_view)
    else:
        item = {
            "preference": "name",
            "note": f"/memories/users/{USER}/{NOTE_FILE}",
            "conversation": first,
        }[kind]
        claude.reply_tool_use("forget", {"kind": kind, "id": item})
        claude.reply("Noted.")
        say(orion, slack, claude, second, f"Please forget that {kind}.", scripted=True)
    orion.wait_idle()

    # Every object in the bucket: none holds it, but the conversation it was said in.
    said_in = (
        home.notes_prefix(first),
        home.conversation_key(first),
        home.profile_key,  # its entry, and its summary until its next turn
        home.search_key,
    )
    holding = [key for key, content in everything_in(bucket).items() if mark in content]
    if kind == "preference":
        assert [key for key in holding if not key.startswith(said_in)] == []
    else:
        assert holding == []

    # The next message in the thread already open: nothing of it in Claude's request.
    follow_up = "What do you remember about me right now?"
    say(orion, slack, claude, second, follow_up)
    assert mark not in json.dumps(request_for(claude, orion, follow_up))
    # The next thread: its greeting, its prompts, and its first request.
    last_question = "One more thing: a reminder for tomorrow at nine, please."
    third, greeting = start(orion, slack, claude, experience, last_question)
    assert mark not in greeting
    if experience == "assistant":
        prompts = slack.suggested_prompts(DM, third)
        assert prompts and mark not in json.dumps([p.prompts for p in prompts])
    assert mark not in json.dumps(request_for(claude, orion, last_question))
    assert mark not in shown(open_home(orion, slack, USER, DM))
