"""A conversation belongs to the person and channel that opened it (issue 36, item 1).

Otto holds a conversation with Orion in his DM: a summary, a note Claude kept for the
thread, a transcript, an index entry. Mira, in her own DM, sends signed events that name
Otto's thread — a message in it, a top-level message claiming its ts (agent_view), a
thread start naming it (assistant_view) — through `/slack/events`, in both Slack
experiences. None of it reaches her Claude request or her memory tool, her index, her
Home tab or her erasure; nothing of Otto's is rewritten or erased; and Otto goes on with
his conversation as if nothing happened.

A channel's conversation is the channel's (issue 39): a DM message naming a channel
thread, a mention naming a DM thread or another channel's thread, and a mention claiming
a DM channel reach nothing of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from app.memory.scopes import (
    conversation_record_key,
    conversations_index_key,
    session_context_key,
    session_prefix,
    user_preferences_key,
)
from app.slack.conversation.answering import NOT_YOURS_IN_CHANNEL
from app.slack.conversation.turn_opening import NOT_YOURS
from app.slack.home.memory_view import ACTION_FORGET_EVERYTHING
from tests import log_events
from tests.e2e import both_experiences, channels, conversation
from tests.e2e.channels import ANA, CARA, OTHER_PUBLIC, PRIVATE, PUBLIC, set_up_channels
from tests.e2e.memory_bucket import Bucket, index_listing
from tests.e2e.test_memory_controls import click, open_home, shown
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

# Each test runs in both experiences (the fake Slack speaks the one under test).
experience = both_experiences.experience
slack = both_experiences.slack

MIRA, MIRA_DM = "U0MIRA", "D0MIRA"
OTTO, OTTO_DM = "U0OTTO", "D0OTTO"
SECRET = "Otto's offer from Globex is 180k"
OTTOS_QUESTION = f"Keep this between us: {SECRET}. Should I take it, given my current role?"
OTTOS_NOTE = f"Negotiation notes: {SECRET}; counter at 195k."
SUMMARY = f"# Job offer\nOtto weighs the Globex offer ({SECRET})."


@pytest.fixture
def orion(
    orion_on_bucket: Callable[..., OrionServer], claude: FakeClaude, experience: str
) -> OrionServer:
    server = orion_on_bucket(slack_experience=experience)
    summary_model = server.settings.summary_model

    def respond(body: dict[str, Any]) -> script.ScriptItem | None:
        return script.text(SUMMARY) if body["model"] == summary_model else None

    claude.responder = respond
    return server


def start(
    orion: OrionServer, slack: FakeSlack, experience: str, user: str, dm: str, text: str
) -> str:
    """`user` opens a conversation and asks `text`; returns its thread once answered."""
    if experience == "assistant":
        thread_ts, _ = conversation.open_thread(orion, slack, user, dm)
        conversation.post_user_message(orion, slack, user, dm, thread_ts, text)
    else:
        thread_ts = slack.add_user_message(dm, None, user, text)
        assert orion.post_event(events.top_level_dm(user, dm, text, ts=thread_ts)).is_success
    slack.wait_for(
        lambda: [m for m in conversation.finished(slack, dm, thread_ts) if "Noted" in m],
        timeout=conversation.FIRST_EVENT_TIMEOUT,
        what="the answer",
    )
    orion.wait_idle()
    return thread_ts


def ottos_conversation(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket, experience: str
) -> tuple[str, dict[str, str]]:
    """Otto's conversation, as Orion keeps it; returns its thread and every object of his."""
    # Claude keeps a note for the thread, then answers.
    thread_holder: dict[str, str] = {}

    def note_then_answer(body: dict[str, Any]) -> script.ScriptItem | None:
        if body["model"] == orion.settings.summary_model:
            return script.text(SUMMARY)
        if not conversation.tool_results(body) and last_user_text(body).startswith("Keep this"):
            thread = thread_holder["ts"]
            path = f"/memories/sessions/{thread.replace('.', '-')}/offer.md"
            return script.tool_use(
                "memory", {"command": "create", "path": path, "file_text": OTTOS_NOTE}
            )
        return script.text("Noted, Otto. Take your time.")

    claude.responder = note_then_answer
    if experience == "assistant":
        thread_ts, _ = conversation.open_thread(orion, slack, OTTO, OTTO_DM)
        thread_holder["ts"] = thread_ts
        conversation.post_user_message(orion, slack, OTTO, OTTO_DM, thread_ts, OTTOS_QUESTION)
    else:
        thread_ts = slack.new_ts()
        thread_holder["ts"] = thread_ts
        slack.add_user_message(OTTO_DM, None, OTTO, OTTOS_QUESTION, ts=thread_ts)
        event = events.top_level_dm(OTTO, OTTO_DM, OTTOS_QUESTION, ts=thread_ts)
        assert orion.post_event(event).is_success
    conversation.wait_for_answer(slack, OTTO_DM, thread_ts, "Noted, Otto. Take your time.")
    bucket.wait_for(conversations_index_key(OTTO), lambda content: thread_ts in content)
    orion.wait_idle()
    objects = ottos_objects(bucket, thread_ts)
    assert SECRET in objects[session_context_key(thread_ts)]
    assert SECRET in objects[f"{session_prefix(thread_ts)}offer.md"]
    assert SECRET in objects[conversation_record_key(thread_ts)]
    return thread_ts, objects


def ottos_objects(bucket: Bucket, thread_ts: str) -> dict[str, str]:
    """Every object of Otto's conversation, and his records."""
    return {
        key: bucket.read(key) or ""
        for key in bucket.names()
        if key.startswith((session_prefix(thread_ts), f"people/{OTTO}/", f"users/{OTTO}/"))
        or key == conversation_record_key(thread_ts)
    }


def forged_events(experience: str, slack: FakeSlack, thread_ts: str) -> list[dict[str, Any]]:
    """Mira's signed events naming Otto's thread, from her own DM."""
    question = "Remind me what we said in this thread, and what notes you kept for it?"
    ts = slack.add_user_message(MIRA_DM, thread_ts, MIRA, question)
    forged = [events.user_message_in_thread(MIRA, MIRA_DM, thread_ts, question, ts=ts)]
    if experience == "agent":
        # A top-level message whose own ts is Otto's thread: a conversation "starting" there.
        forged.append(events.top_level_dm(MIRA, MIRA_DM, question, ts=thread_ts))
    else:
        forged.insert(0, events.assistant_thread_started(MIRA, MIRA_DM, thread_ts))
    return forged


def test_an_event_naming_someone_elses_thread_reaches_nothing_of_theirs(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    experience: str,
) -> None:
    bucket.write(user_preferences_key(MIRA), json.dumps({"name": "Mira"}))
    thread_ts, otto_before = ottos_conversation(orion, slack, claude, bucket, experience)
    generations = {k: g for k, g in bucket.generations().items() if k in otto_before}
    # Should Claude ever be asked in Mira's name, it would look for the thread's notes.
    notes = f"/memories/sessions/{thread_ts.replace('.', '-')}"
    claude.responder = lambda body: (
        script.tool_use("memory", {"command": "view", "path": notes})
        if not conversation.tool_results(body)
        else script.text("Here is what I found.")
    )
    asked = len(claude.requests)

    for forged in forged_events(experience, slack, thread_ts):
        assert orion.post_event(forged).status_code == 200
        orion.wait_handled(forged["event_id"], timeout=conversation.FIRST_EVENT_TIMEOUT)
    orion.wait_idle()

    # Mira is told, in her DM, that this is not a conversation she can continue.
    said_to_mira = [m.text for m in slack.messages(MIRA_DM) if m.is_bot]
    assert any(NOT_YOURS in text for text in said_to_mira), said_to_mira
    assert orion.logged(log_events.SLACK_CONVERSATION_NOT_OWNER)
    # Nothing of Otto's reached Claude in her name (Claude was not asked at all), nor
    # Slack in her DM.
    assert len(claude.requests) == asked
    assert not any(SECRET in text or "180k" in text for text in said_to_mira)
    # Nothing of Otto's was rewritten: not his record's owner, not his summary's.
    assert {k: g for k, g in bucket.generations().items() if k in otto_before} == generations
    assert (
        json.loads(bucket.read(conversation_record_key(thread_ts)) or "")["owner"]["user"] == OTTO
    )
    # Mira's records name no thread of Otto's; her Home tab shows none.
    assert thread_ts not in (bucket.read(conversations_index_key(MIRA)) or "")
    assert not [
        k
        for k in bucket.names()
        if k.startswith(f"people/{MIRA}/threads/") and thread_ts.replace(".", "-") in k
    ]
    view = open_home(orion, slack, MIRA, MIRA_DM)
    assert "Job offer" not in shown(view) and SECRET not in shown(view)

    # Mira forgets everything: Otto keeps all he had.
    click(orion, slack, MIRA, view, ACTION_FORGET_EVERYTHING)
    orion.wait_logged(log_events.MEMORY_FORGET)
    orion.wait_idle()
    assert ottos_objects(bucket, thread_ts) == otto_before

    # And Otto's next message goes on with his conversation, its history and its summary.
    claude.responder = None
    claude.reply("Yes: counter at 195k.")
    follow_up = "So what should I counter with?"
    ts = slack.add_user_message(OTTO_DM, thread_ts, OTTO, follow_up)
    assert orion.post_event(
        events.user_message_in_thread(OTTO, OTTO_DM, thread_ts, follow_up, ts=ts)
    ).is_success
    conversation.wait_for_answer(slack, OTTO_DM, thread_ts, "Yes: counter at 195k.")
    [request] = [
        r for r in conversation.main_requests(claude, orion) if last_user_text(r) == follow_up
    ]
    assert SECRET in json.dumps(request["messages"]), "his history: his transcript"
    assert SECRET in conversation.remembered(request), "his summary"


def test_a_thread_from_before_records_is_given_to_nobody_its_records_do_not_name(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    experience: str,
) -> None:
    # Otto's conversation from before records were kept: his summary and his index entry.
    thread_ts = slack.add_user_message(OTTO_DM, None, OTTO, OTTOS_QUESTION)
    bucket.write(session_context_key(thread_ts), SUMMARY)
    bucket.write(*index_listing(OTTO, thread_ts, OTTO_DM))
    asked = len(claude.requests)

    for forged in forged_events(experience, slack, thread_ts):
        assert orion.post_event(forged).status_code == 200
        orion.wait_handled(forged["event_id"], timeout=conversation.FIRST_EVENT_TIMEOUT)
    orion.wait_idle()

    assert len(claude.requests) == asked, "Claude was not asked in her name"
    assert bucket.read(conversation_record_key(thread_ts)) is None, "nobody took the thread"
    assert bucket.read(session_context_key(thread_ts)) == SUMMARY
    assert any(NOT_YOURS in m.text for m in slack.messages(MIRA_DM) if m.is_bot)

    # Otto himself, back in it, is answered with his summary; the thread becomes his.
    claude.reply("Noted, Otto.")
    follow_up = "Where were we on the Globex offer?"
    ts = slack.add_user_message(OTTO_DM, thread_ts, OTTO, follow_up)
    assert orion.post_event(
        events.user_message_in_thread(OTTO, OTTO_DM, thread_ts, follow_up, ts=ts)
    ).is_success
    conversation.wait_for_answer(slack, OTTO_DM, thread_ts, "Noted, Otto.")
    # (His first message, read back from Slack, and this one: merged into one user turn.)
    [request] = [
        r
        for r in conversation.main_requests(claude, orion)
        if last_user_text(r).endswith(follow_up)
    ]
    assert SECRET in conversation.remembered(request)
    orion.wait_idle()
    assert (
        json.loads(bucket.read(conversation_record_key(thread_ts)) or "")["owner"]["user"] == OTTO
    )


# --- channels: a DM thread is never a channel's, nor the reverse (issue 39) ----------------

CHANNEL_SECRET = "the launch moves to the 14th, keep it in this channel"


def channel_thread(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, channel: str = PRIVATE
) -> str:
    """Ana's thread in a channel, kept as the channel's; returns its thread."""
    set_up_channels(slack)
    claude.reply("Noted for the channel.")
    thread_ts = channels.thread_of(channels.mention(orion, slack, ANA, channel, CHANNEL_SECRET))
    channels.wait_for_answer(slack, channel, thread_ts, "Noted for the channel.")
    orion.wait_idle()
    return thread_ts


def test_a_dm_message_naming_a_channel_thread_reaches_nothing_of_the_channel(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket, experience: str
) -> None:
    thread_ts = channel_thread(orion, slack, claude)
    record = bucket.read(conversation_record_key(thread_ts))
    asked = len(claude.requests)

    for forged in forged_events(experience, slack, thread_ts):
        assert orion.post_event(forged).status_code == 200
        orion.wait_handled(forged["event_id"], timeout=conversation.FIRST_EVENT_TIMEOUT)
    orion.wait_idle()

    said_to_mira = [m.text for m in slack.messages(MIRA_DM) if m.is_bot]
    assert any(NOT_YOURS in text for text in said_to_mira), said_to_mira
    assert len(claude.requests) == asked
    assert bucket.read(conversation_record_key(thread_ts)) == record


def test_a_mention_naming_a_dm_thread_reaches_nothing_of_the_person(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket, experience: str
) -> None:
    thread_ts, otto_before = ottos_conversation(orion, slack, claude, bucket, experience)
    set_up_channels(slack)
    claude.responder = None
    asked = len(claude.requests)

    # A mention whose thread_ts is Otto's DM thread (Slack would never send it).
    forged = channels.mention(
        orion, slack, ANA, PUBLIC, "what's in this thread?", thread_ts=thread_ts
    )
    orion.wait_handled(forged["event_id"], timeout=conversation.FIRST_EVENT_TIMEOUT)
    orion.wait_idle()

    shown_in_channel = [m.text for m in slack.messages(PUBLIC) if m.is_bot]
    assert any(NOT_YOURS_IN_CHANNEL in text for text in shown_in_channel), shown_in_channel
    assert len(claude.requests) == asked
    assert ottos_objects(bucket, thread_ts) == otto_before


def test_a_mention_naming_another_channels_thread_is_refused(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    thread_ts = channel_thread(orion, slack, claude, PRIVATE)
    record = bucket.read(conversation_record_key(thread_ts))
    asked = len(claude.requests)

    # Cara, in #billing, names the private channel's thread.
    forged = channels.mention(orion, slack, CARA, OTHER_PUBLIC, "recap?", thread_ts=thread_ts)
    orion.wait_handled(forged["event_id"], timeout=conversation.FIRST_EVENT_TIMEOUT)
    orion.wait_idle()

    assert len(claude.requests) == asked
    assert bucket.read(conversation_record_key(thread_ts)) == record
    assert not any(CHANNEL_SECRET in m.text for m in slack.messages(OTHER_PUBLIC))


def test_a_mention_claiming_a_dm_is_no_channel_at_all(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    forged = events.app_mention(MIRA, MIRA_DM, "<@UBOT> hi")
    assert orion.post_event(forged).status_code == 200
    orion.wait_handled(forged["event_id"])
    assert claude.calls == []
    assert [m for m in slack.messages(MIRA_DM) if m.is_bot] == []
    assert not [n for n in bucket.names() if n.startswith(("conversations/", "channel"))]
