"""Forget reaches every copy, at once (issue 36, item 2; issue 43, item 2).

Zoé tells Orion her name (a preference), Claude keeps a note about her, and the
conversation is summarised with a welcome back to it; a second thread is open meanwhile.
Then she forgets one of the three — on her Home tab, or by asking Claude in the open
thread — and every object in the bucket is read: nothing holds it any more, but for the
conversation it was said in (for a preference: what she said stays that conversation's
until she forgets it). The next message in the thread already open, the next thread's
greeting and prompts, and the next turn's request to Claude never use it.

Forgetting a conversation while Orion is still answering in it sticks: the turn's end
writes nothing of it back. And a member's Forget everything takes their words out of a
channel's search index: recall from a public channel no longer finds the thread by them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from app.learning.search_index import parse_search_index
from app.memory.homes import channel, person
from app.slack.home.memory_view import (
    ACTION_FORGET_CONVERSATION,
    ACTION_FORGET_EVERYTHING,
    ACTION_FORGET_NOTE,
    ACTION_FORGET_PREFERENCE,
)
from tests import layout, log_events
from tests.e2e import channels as in_channel
from tests.e2e import conversation
from tests.e2e.channels import ANA, CARA, OTHER_PUBLIC, PUBLIC, mention, set_up_channels, thread_of
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


# --- a conversation forgotten while Orion is still answering in it --------------------------

LAWYERS = (
    f"I'm choosing a {TOPIC} lawyer this week and need to compare three offices by fees "
    "and availability, please."
)


@pytest.mark.parametrize(
    "case", [("assistant", "home"), ("agent", "home")], ids=["assistant", "agent"]
)
def test_forgetting_a_conversation_while_orion_answers_in_it_leaves_nothing_of_it(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    case: tuple[str, str],
) -> None:
    experience = case[0]
    summary_model = orion.settings.summary_model
    claude.responder = lambda body: script.text(SUMMARY) if body["model"] == summary_model else None
    thread_ts, _ = start(orion, slack, claude, experience, LAWYERS)
    home = person(USER)
    bucket.wait_for(home.search_key, lambda content: TOPIC in content)
    assert TOPIC in shown(open_home(orion, slack, USER, DM)), "listed before"

    # A slow answer in the same conversation: she forgets it while Orion is writing it,
    # and the turn's end (transcript, summary, search entry, welcome) comes after.
    streams = len(slack.calls_to("chat.startStream"))
    claude.reply(f"About the {TOPIC} lawyer: " + "compare the fees. " * 40, chunk_delay=0.05)
    follow_up = f"Which of the {TOPIC} offices answers fastest?"
    ts = slack.add_user_message(DM, thread_ts, USER, follow_up)
    message = events.user_message_in_thread(USER, DM, thread_ts, follow_up, ts)
    assert orion.post_event(message).is_success
    slack.wait_for(
        lambda: len(slack.calls_to("chat.startStream")) > streams, what="the answer to start"
    )
    turn_ends = len(orion.logged(log_events.MEMORY_AFTER_TURN))
    after_click = click(
        orion, slack, USER, open_home(orion, slack, USER, DM), ACTION_FORGET_CONVERSATION, thread_ts
    )
    assert TOPIC not in shown(after_click)

    slack.wait_for(
        lambda: len(orion.logged(log_events.MEMORY_AFTER_TURN)) > turn_ends,
        timeout=30,
        what="the turn's end",
    )
    orion.wait_idle()
    assert orion.logged(log_events.MEMORY_ERASED_DURING_EVENT), "the turn took its writes back"
    # Nothing of it came back: not its object, not its search entry, not in her profile.
    everything = everything_in(bucket)
    assert home.conversation_key(thread_ts) not in everything
    assert [key for key, content in everything.items() if TOPIC in content] == []
    assert thread_ts not in parse_search_index(everything.get(home.search_key)).threads
    assert layout.profile_of(everything.get(home.profile_key)).entry(thread_ts) is None
    assert layout.welcome_in(everything.get(home.profile_key)) is None
    # Nor on her Home tab, nor in the next thread's greeting.
    assert TOPIC not in shown(open_home(orion, slack, USER, DM))
    _, greeting = start(orion, slack, claude, experience, "A reminder for nine tomorrow, please.")
    assert TOPIC not in greeting


# --- a member's words in a public channel, after Forget everything ---------------------------

# Long enough to be summarised and indexed at the turn's end.
WORDS = (
    "the pelican mascot for the Zanzibar offsite needs a bigger budget, and the print shop "
    "wants the artwork by Friday at noon"
)
CHANNEL_SUMMARY = "# Launch thread\nThe channel talked about the launch."


@pytest.mark.parametrize("case", [("assistant", "home")], ids=["assistant"])
def test_after_forget_everything_recall_from_a_public_channel_no_longer_finds_her_words(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    case: tuple[str, str],
) -> None:
    set_up_channels(slack)
    summary_model = orion.settings.summary_model
    claude.responder = lambda body: (
        script.text(CHANNEL_SUMMARY) if body["model"] == summary_model else None
    )
    # Ana says it in #launch; the channel's search index holds her words.
    claude.reply("Noted.")
    said = thread_of(mention(orion, slack, ANA, PUBLIC, WORDS))
    in_channel.wait_for_answer(slack, PUBLIC, said, "Noted.")
    orion.wait_idle()
    index = channel(PUBLIC).search_key
    assert parse_search_index(bucket.read(index)).postings("pelican")

    def recall_from_billing(question: str) -> str:
        """Cara asks in #billing, another public channel; what `recall` found."""
        claude.reply_tool_use("recall", {"query": "pelican mascot Zanzibar"})
        claude.reply("Here is what I found.")
        asked = thread_of(mention(orion, slack, CARA, OTHER_PUBLIC, question))
        in_channel.wait_for_answer(slack, OTHER_PUBLIC, asked, "Here is what I found.")
        orion.wait_idle()
        [result] = conversation.tool_results(conversation.main_requests(claude, orion)[-1])
        return conversation.result_text(result)

    found = recall_from_billing("What did the other channels decide about the offsite?")
    assert said.replace(".", "") in found, "found by her words"

    # Ana forgets everything, from her Home tab.
    view = open_home(orion, slack, ANA, slack.dm_channel(ANA))
    click(orion, slack, ANA, view, ACTION_FORGET_EVERYTHING)
    orion.wait_idle()

    assert not parse_search_index(bucket.read(index)).postings("pelican")
    assert "pelican" not in (bucket.read(channel(PUBLIC).conversation_key(said)) or "")
    found = recall_from_billing("Anything else about the offsite from other channels?")
    assert said.replace(".", "") not in found, "her words no longer find it"
