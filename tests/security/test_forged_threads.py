"""A conversation belongs to the person and channel that opened it (issue 36 item 1, issue
43 item 6).

Otto holds a conversation with Orion in his DM: a transcript, a summary, a note Claude
kept for the thread, his profile listing it. Mira, in her own DM, sends signed events that
name Otto's thread — a message in it, a top-level message claiming its ts (agent_view), a
thread start naming it (assistant_view) — through `/slack/events`, in both Slack
experiences. An event looks for its thread only in its own owner's home: Mira's events
start a conversation of her own, and nothing of Otto's — transcript, summary, notes,
profile — reaches her Claude request, her memory tool, her answer or her Home tab;
nothing of his is rewritten or erased (her Forget everything included); and Otto goes on
with his conversation as if nothing happened.

A channel's conversation is the channel's (issue 39): a DM event naming a channel thread,
a mention naming a DM thread or another channel's thread, and a mention claiming a DM
channel reach nothing of it — and a DM event naming a channel thread's ts before the
mention that opens it cannot squat it: the channel's members are answered there, with the
channel's memory.

Found by the attacker (round 11): an event's `user` was taken to be the person of the DM
the event names. Events signed for Otto naming Mira's DM (anyone holding the app's
signing secret can send them) were answered there with Otto's memory: Claude recalled
his words, and the answer, in Mira's DM, could say them. A DM is now the event's
person's only where Slack says so (`conversations.open`, asked once a person, beside the
memory reads; when Slack does not answer, only a conversation of theirs Orion keeps in
that DM vouches for it): elsewhere the turn is refused and nothing of theirs is read
into it, the greeting is the generic one, and the Messages tab's prompts name no one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from app.slack.home.memory_view import ACTION_FORGET_EVERYTHING
from tests import log_events
from tests.e2e import both_experiences, channels, conversation
from tests.e2e.channels import ANA, BEN, CARA, OTHER_PUBLIC, PRIVATE, PUBLIC, set_up_channels
from tests.e2e.home import click, open_home, shown
from tests.e2e.memory_bucket import Bucket
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.slack_api import FakeSlack
from tests.layout import (
    channel,
    messages_in,
    person,
    preferences_key,
    profile,
    profile_of,
    summary_in,
    summary_of_latest,
)
from tests.layout import conversation as conversation_object
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
# What would give any of Otto's away.
OTTOS_WORDS = (SECRET, "180k", "195k", "Globex", "Job offer")
MIRAS_SUMMARY = "# A question\nMira asked what a thread held."
MIRAS_QUESTION = "Remind me what we said in this thread, and what notes you kept for it?"


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
    home = person(OTTO)
    bucket.wait_for(home.profile_key, lambda content: SECRET in (summary_of_latest(content) or ""))
    orion.wait_idle()
    objects = ottos_objects(bucket)
    assert profile_of(objects[home.profile_key]).entry(thread_ts) is not None
    assert SECRET in (summary_of_latest(objects[home.profile_key]) or "")
    assert SECRET in objects[f"{home.notes_prefix(thread_ts)}offer.md"]
    assert SECRET in " ".join(messages_in(objects[home.conversation_key(thread_ts)]))
    return thread_ts, objects


def ottos_objects(bucket: Bucket) -> dict[str, str]:
    """Every object of Otto's: his home."""
    return {
        key: bucket.read(key) or "" for key in bucket.names() if key.startswith(person(OTTO).prefix)
    }


def ottos_generations(bucket: Bucket) -> dict[str, str]:
    """Each object of Otto's and its version: a rewrite, even of the same bytes, shows."""
    return {k: g for k, g in bucket.generations().items() if k.startswith(person(OTTO).prefix)}


def forged_events(experience: str, slack: FakeSlack, thread_ts: str) -> list[dict[str, Any]]:
    """Mira's signed events naming Otto's thread, from her own DM."""
    ts = slack.add_user_message(MIRA_DM, thread_ts, MIRA, MIRAS_QUESTION)
    forged = [events.user_message_in_thread(MIRA, MIRA_DM, thread_ts, MIRAS_QUESTION, ts=ts)]
    if experience == "agent":
        # A top-level message whose own ts is Otto's thread: a conversation "starting" there.
        forged.append(events.top_level_dm(MIRA, MIRA_DM, MIRAS_QUESTION, ts=thread_ts))
    else:
        forged.insert(0, events.assistant_thread_started(MIRA, MIRA_DM, thread_ts))
    return forged


def look_for_the_threads_notes(orion: OrionServer, claude: FakeClaude, thread_ts: str) -> None:
    """From now on, Claude answering anyone first looks at the thread's notes (what a
    prompt-injected question would have it do), then answers; the summary model writes
    an innocuous summary."""
    notes = f"/memories/sessions/{thread_ts.replace('.', '-')}"
    claude.responder = lambda body: (
        script.text(MIRAS_SUMMARY)
        if body["model"] == orion.settings.summary_model
        else script.tool_use("memory", {"command": "view", "path": notes})
        if not conversation.tool_results(body)
        else script.text("Here is what I found.")
    )


def send(orion: OrionServer, forged: list[dict[str, Any]]) -> None:
    for event in forged:
        assert orion.post_event(event).status_code == 200
        orion.wait_handled(event["event_id"], timeout=conversation.FIRST_EVENT_TIMEOUT)
    orion.wait_idle()


def nothing_of_ottos_in(texts: list[str]) -> None:
    for text in texts:
        for word in OTTOS_WORDS:
            assert word not in text, f"{word!r} reached: {text[:300]!r}"


def test_an_event_naming_someone_elses_thread_reaches_nothing_of_theirs(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    experience: str,
) -> None:
    bucket.write(preferences_key(MIRA), json.dumps({"name": "Mira"}))
    thread_ts, otto_before = ottos_conversation(orion, slack, claude, bucket, experience)
    generations = ottos_generations(bucket)
    look_for_the_threads_notes(orion, claude, thread_ts)
    asked = len(claude.requests)

    send(orion, forged_events(experience, slack, thread_ts))

    # Mira is answered in a conversation of her own: Claude was asked in her name (with
    # her own memory), and saw nothing of Otto's — not his transcript, his summary or
    # his profile in the request, not his note through the memory tool.
    conversation.wait_for_answer(slack, MIRA_DM, thread_ts, "Here is what I found.")
    orion.wait_idle()
    hers = claude.requests[asked:]
    assert [r for r in hers if r["model"] == orion.settings.anthropic_model]
    assert any("Mira" in conversation.system_text(r) for r in hers), "her own memory"
    nothing_of_ottos_in([json.dumps(r) for r in hers])
    # Nor did Slack show her any of it in her DM.
    nothing_of_ottos_in([m.text for m in slack.messages(MIRA_DM) if m.is_bot])
    # Nothing of Otto's was rewritten, and nothing was added to his home.
    assert ottos_generations(bucket) == generations
    assert ottos_objects(bucket) == otto_before
    # What Orion keeps of it is hers, in her own home, and holds nothing of Otto's.
    mira = person(MIRA)
    record = bucket.read(mira.conversation_key(thread_ts))
    assert record is not None and json.loads(record)["owner"]["user"] == MIRA
    assert MIRAS_QUESTION in messages_in(record)
    nothing_of_ottos_in([bucket.read(k) or "" for k in bucket.names() if k.startswith(mira.prefix)])
    view = open_home(orion, slack, MIRA, MIRA_DM)
    nothing_of_ottos_in([shown(view)])

    # Mira forgets everything: Otto keeps all he had, untouched.
    click(orion, slack, MIRA, view, ACTION_FORGET_EVERYTHING)
    orion.wait_logged(log_events.MEMORY_FORGET)
    orion.wait_idle()
    assert ottos_generations(bucket) == generations
    assert ottos_objects(bucket) == otto_before

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


def test_an_event_signed_for_someone_in_another_persons_dm_shows_nothing_of_theirs_there(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    experience: str,
) -> None:
    """Events signed for Otto naming Mira's DM (what anyone holding the app's signing
    secret can send): whatever Orion says there, Mira reads. Nothing Orion keeps of Otto's
    may reach that DM: not his welcome back, not his memory through Claude."""
    ottos_conversation(orion, slack, claude, bucket, experience)
    # Claude answering anyone first recalls what they said about the offer, as asked.
    claude.responder = lambda body: (
        script.text(MIRAS_SUMMARY)
        if body["model"] == orion.settings.summary_model
        else script.tool_use("recall", {"queries": ["Globex offer"]})
        if not conversation.tool_results(body)
        else script.text("Here is what I found.")
    )
    asked = len(claude.requests)
    question = "What did I say about the offer?"

    if experience == "assistant":
        forged_ts = slack.open_assistant_thread(MIRA_DM)
        send(orion, [events.assistant_thread_started(OTTO, MIRA_DM, forged_ts)])
        ts = slack.add_user_message(MIRA_DM, forged_ts, OTTO, question)
        forged = events.user_message_in_thread(OTTO, MIRA_DM, forged_ts, question, ts=ts)
    else:
        forged_ts = slack.add_user_message(MIRA_DM, None, OTTO, question)
        forged = events.top_level_dm(OTTO, MIRA_DM, question, ts=forged_ts)
    send(orion, [forged])

    nothing_of_ottos_in([m.text for m in slack.messages(MIRA_DM) if m.is_bot])
    nothing_of_ottos_in([json.dumps(r) for r in claude.requests[asked:]])


def test_a_dm_thread_is_read_from_its_owners_home_alone_never_from_slack(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    experience: str,
) -> None:
    # Otto's conversation as `orion migrate` leaves one from before records: its object
    # (his question, the summary) and his profile listing it; Slack holds his words too.
    thread_ts = slack.add_user_message(OTTO_DM, None, OTTO, OTTOS_QUESTION)
    home = person(OTTO)
    bucket.write(
        home.conversation_key(thread_ts),
        conversation_object(
            OTTO,
            thread_ts,
            channel_id=OTTO_DM,
            summary=SUMMARY,
            title="Job offer",
            messages=[("user", OTTOS_QUESTION)],
        ),
    )
    bucket.write(
        home.profile_key, profile(conversations=[(thread_ts, "Job offer")], channel_id=OTTO_DM)
    )
    otto_before, generations = ottos_objects(bucket), ottos_generations(bucket)
    look_for_the_threads_notes(orion, claude, thread_ts)
    asked = len(claude.requests)

    send(orion, forged_events(experience, slack, thread_ts))

    conversation.wait_for_answer(slack, MIRA_DM, thread_ts, "Here is what I found.")
    orion.wait_idle()
    nothing_of_ottos_in([json.dumps(r) for r in claude.requests[asked:]])
    nothing_of_ottos_in([m.text for m in slack.messages(MIRA_DM) if m.is_bot])
    # A DM's history is Orion's own transcript: Slack is never asked for a DM's thread.
    read_from_slack = [c.args.get("channel") for c in slack.calls_to("conversations.replies")]
    assert not [c for c in read_from_slack if str(c).startswith("D")], read_from_slack
    assert ottos_generations(bucket) == generations

    # Otto himself, back in it, is answered with his history and his summary.
    claude.responder = None
    claude.reply("Noted, Otto.")
    follow_up = "Where were we on the Globex offer?"
    ts = slack.add_user_message(OTTO_DM, thread_ts, OTTO, follow_up)
    assert orion.post_event(
        events.user_message_in_thread(OTTO, OTTO_DM, thread_ts, follow_up, ts=ts)
    ).is_success
    conversation.wait_for_answer(slack, OTTO_DM, thread_ts, "Noted, Otto.")
    # (His first message, with no answer kept, and this one: merged into one user turn.)
    [request] = [
        r
        for r in conversation.main_requests(claude, orion)
        if last_user_text(r).endswith(follow_up)
    ]
    assert SECRET in json.dumps(request["messages"]), "his history: his transcript"
    assert SECRET in conversation.remembered(request), "his summary"
    orion.wait_idle()
    kept = bucket.read(home.conversation_key(thread_ts))
    assert json.loads(kept or "")["owner"]["user"] == OTTO
    assert messages_in(kept)[:2] == [OTTOS_QUESTION, follow_up]
    assert otto_before.keys() <= ottos_objects(bucket).keys()


# --- channels: a DM thread is never a channel's, nor the reverse (issue 39) ----------------

CHANNEL_SECRET = "the launch moves to the 14th, keep it in this channel"
CHANNELS_WORDS = (CHANNEL_SECRET, "the 14th")


def channel_thread(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, channel_id: str = PRIVATE
) -> str:
    """Ana's thread in a channel, kept as the channel's; returns its thread."""
    set_up_channels(slack)
    claude.reply("Noted for the channel.")
    thread_ts = channels.thread_of(channels.mention(orion, slack, ANA, channel_id, CHANNEL_SECRET))
    channels.wait_for_answer(slack, channel_id, thread_ts, "Noted for the channel.")
    orion.wait_idle()
    return thread_ts


def channel_versions(bucket: Bucket, channel_id: str) -> dict[str, str]:
    prefix = channel(channel_id).prefix
    return {k: g for k, g in bucket.generations().items() if k.startswith(prefix)}


def nothing_of_the_channels_in(texts: list[str]) -> None:
    for text in texts:
        for word in CHANNELS_WORDS:
            assert word not in text, f"{word!r} reached: {text[:300]!r}"


def test_a_dm_message_naming_a_channel_thread_reaches_nothing_of_the_channel(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket, experience: str
) -> None:
    thread_ts = channel_thread(orion, slack, claude)
    record_key = channel(PRIVATE).conversation_key(thread_ts)
    assert CHANNEL_SECRET in " ".join(messages_in(bucket.read(record_key)))
    versions = channel_versions(bucket, PRIVATE)
    look_for_the_threads_notes(orion, claude, thread_ts)
    asked = len(claude.requests)

    send(orion, forged_events(experience, slack, thread_ts))

    conversation.wait_for_answer(slack, MIRA_DM, thread_ts, "Here is what I found.")
    orion.wait_idle()
    nothing_of_the_channels_in([json.dumps(r) for r in claude.requests[asked:]])
    nothing_of_the_channels_in([m.text for m in slack.messages(MIRA_DM) if m.is_bot])
    assert channel_versions(bucket, PRIVATE) == versions


def test_a_dm_event_naming_a_channel_thread_first_cannot_squat_it(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket, experience: str
) -> None:
    """Issue 43 item 6: Mira learns (or guesses) the ts a mention in the private channel
    will have, and names it from her DM before the mention arrives. The channel's members
    are still answered there, with the channel's memory and its own record of the thread."""
    set_up_channels(slack)
    decisions = channel(PRIVATE).memory_prefix + "decisions.md"
    bucket.write(decisions, f"# Decisions\n- {CHANNEL_SECRET}\n")
    thread_ts = slack.new_ts()
    look_for_the_threads_notes(orion, claude, thread_ts)

    send(orion, forged_events(experience, slack, thread_ts))
    conversation.wait_for_answer(slack, MIRA_DM, thread_ts, "Here is what I found.")
    orion.wait_idle()
    assert bucket.read(person(MIRA).conversation_key(thread_ts)) is not None, "hers, at home"

    # Ana's mention opens the thread at that very ts; Claude reads the channel's memory.
    asked = len(claude.requests)
    claude.responder = lambda body: (
        script.text("# Launch\nThe channel discussed the launch date.")
        if body["model"] == orion.settings.summary_model
        else script.tool_use(
            "memory", {"command": "view", "path": f"/memories/channels/{PRIVATE}/decisions.md"}
        )
        if not conversation.tool_results(body)
        else script.text("The channel decided: see its decisions.")
    )
    text = "<@UBOT> when is the launch?"
    slack.add_user_message(PRIVATE, None, ANA, text, ts=thread_ts)
    mention = events.app_mention(ANA, PRIVATE, text, ts=thread_ts)
    assert orion.post_event(mention).status_code == 200
    channels.wait_for_answer(slack, PRIVATE, thread_ts, "The channel decided: see its decisions.")
    orion.wait_idle()

    # Answered, not refused: the channel's memory reached Claude through the memory tool.
    results = [
        conversation.result_text(result)
        for request in claude.requests[asked:]
        for result in conversation.tool_results(request)
    ]
    assert any(CHANNEL_SECRET in result for result in results), results
    assert not any("can't continue" in m for m in channels.answers(slack, PRIVATE, thread_ts)), (
        "the channel's members were refused"
    )
    # The channel keeps the thread as its own, in its home; Mira's stays in hers.
    record = bucket.read(channel(PRIVATE).conversation_key(thread_ts))
    assert record is not None and json.loads(record)["owner"]["kind"] == "channel"
    assert any("when is the launch?" in m for m in messages_in(record))
    nothing_of_the_channels_in([bucket.read(person(MIRA).conversation_key(thread_ts)) or ""])

    # Ben, another member, goes on in the thread: answered with what was said there.
    claude.responder = None
    claude.reply("Still the 14th, Ben.")
    follow_up = channels.mention(
        orion, slack, BEN, PRIVATE, "and is that still the plan?", thread_ts=thread_ts
    )
    orion.wait_handled(follow_up["event_id"], timeout=conversation.FIRST_EVENT_TIMEOUT)
    channels.wait_for_answer(slack, PRIVATE, thread_ts, "Still the 14th, Ben.")
    [request] = [
        r
        for r in conversation.main_requests(claude, orion)
        if "and is that still the plan?" in last_user_text(r)
    ]
    assert "when is the launch?" in json.dumps(request["messages"])


def test_a_mention_naming_a_dm_thread_reaches_nothing_of_the_person(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket, experience: str
) -> None:
    thread_ts, otto_before = ottos_conversation(orion, slack, claude, bucket, experience)
    generations = ottos_generations(bucket)
    set_up_channels(slack)
    look_for_the_threads_notes(orion, claude, thread_ts)
    asked = len(claude.requests)

    # A mention whose thread_ts is Otto's DM thread (Slack would never send it).
    forged = channels.mention(
        orion, slack, ANA, PUBLIC, "what's in this thread?", thread_ts=thread_ts
    )
    orion.wait_handled(forged["event_id"], timeout=conversation.FIRST_EVENT_TIMEOUT)
    orion.wait_idle()

    # Answered as the channel's own thread, with nothing of Otto's.
    channels.wait_for_answer(slack, PUBLIC, thread_ts, "Here is what I found.")
    nothing_of_ottos_in([json.dumps(r) for r in claude.requests[asked:]])
    nothing_of_ottos_in([m.text for m in slack.messages(PUBLIC) if m.is_bot])
    assert ottos_generations(bucket) == generations
    assert ottos_objects(bucket) == otto_before


def test_a_mention_naming_another_channels_thread_reaches_nothing_of_it(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    thread_ts = channel_thread(orion, slack, claude, PRIVATE)
    versions = channel_versions(bucket, PRIVATE)
    look_for_the_threads_notes(orion, claude, thread_ts)
    asked = len(claude.requests)

    # Cara, in #billing, names the private channel's thread.
    forged = channels.mention(orion, slack, CARA, OTHER_PUBLIC, "recap?", thread_ts=thread_ts)
    orion.wait_handled(forged["event_id"], timeout=conversation.FIRST_EVENT_TIMEOUT)
    orion.wait_idle()

    nothing_of_the_channels_in([json.dumps(r) for r in claude.requests[asked:]])
    nothing_of_the_channels_in([m.text for m in slack.messages(OTHER_PUBLIC)])
    assert channel_versions(bucket, PRIVATE) == versions
    # Whatever #billing keeps of it is its own, and holds nothing of the private thread.
    kept = bucket.read(channel(OTHER_PUBLIC).conversation_key(thread_ts))
    nothing_of_the_channels_in([kept or "", summary_in(kept) or ""])


def test_a_mention_claiming_a_dm_is_no_channel_at_all(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    forged = events.app_mention(MIRA, MIRA_DM, "<@UBOT> hi")
    assert orion.post_event(forged).status_code == 200
    orion.wait_handled(forged["event_id"])
    assert claude.calls == []
    assert [m for m in slack.messages(MIRA_DM) if m.is_bot] == []
    assert not [n for n in bucket.names() if n.startswith(("people/", "channels/"))]
