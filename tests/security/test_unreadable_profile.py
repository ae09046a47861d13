"""A profile that cannot be read is never written over as if it were empty.

A person's profile holds their erasure marks (when they were forgotten, which conversations
they forgot) and their conversation list. Written over as empty, the marks go and what was
forgotten could come back. Played end to end (the real Orion HTTP app, fake Slack and
Claude, the GCS emulator): the person is still greeted and answered, without memory, and
told so; the broken profile stays byte for byte as it was until Forget everything replaces
it with that erasure's mark; the operator gets one error line per event, never its content.
A channel's alike: its mentions are answered, nothing of them kept, and an admin's choice
for it is refused rather than written over its profile.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from app.memory.homes import channel, person, preferences_key
from app.slack.channel_view.orion_command import UNAVAILABLE
from app.slack.home.memory_view import ACTION_FORGET_CONVERSATION, ACTION_FORGET_EVERYTHING
from tests import layout, log_events
from tests.e2e import channels as in_channel
from tests.e2e import conversation
from tests.e2e.channels import (
    ADMIN,
    BEN,
    PUBLIC,
    command,
    mention,
    set_up_channels,
    shown_text,
    thread_of,
)
from tests.e2e.conversation import open_thread
from tests.e2e.home import click, open_home
from tests.e2e.memory_bucket import Bucket
from tests.e2e.test_memory_controls import (
    DM,
    SUMMARY,
    THREAD,
    TITLE,
    UPDATED,
    USER,
    everything_in,
    left_of,
    mira,
    otto,
    seed,
)
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

PROFILE = person(USER).profile_key
# A conversation she forgot earlier, and when she last asked to be forgotten.
FORGOTTEN_THREAD = "1776000000.000100"
FORGOTTEN_AT = UPDATED - timedelta(days=1)
ERASED_AT = UPDATED - timedelta(days=2)
STREAM_CALLS = ("chat.startStream", "chat.appendStream", "chat.stopStream")
ANSWER = "Here is a plan for the week: Monday planning, Friday review."


def _marked_profile() -> dict[str, object]:
    """Her profile as Orion wrote it: listing THREAD, with both kinds of erasure mark."""
    profile = json.loads(layout.profile(conversations=[(THREAD, TITLE)], channel_id=DM, at=UPDATED))
    profile["erased_at"] = ERASED_AT.isoformat()
    profile["forgotten"] = {FORGOTTEN_THREAD: FORGOTTEN_AT.isoformat()}
    return profile


def _cut_short() -> str:
    whole = json.dumps(_marked_profile())
    return whole[: len(whole) * 2 // 3]


def _garbled_mark() -> str:
    return json.dumps({**_marked_profile(), "erased_at": "the Tuesday before last"})


def _not_an_object() -> str:
    return json.dumps([_marked_profile()])


def _too_large() -> str:
    return json.dumps({**_marked_profile(), "conversations": ["x" * 1_000] * 5_000})


def _nested() -> str:
    return "[" * 50_000 + "]" * 50_000  # past Python's recursion limit


BROKEN: dict[str, Callable[[], str]] = {
    "cut short": _cut_short,
    "an erasure mark garbled": _garbled_mark,
    "not an object": _not_an_object,
    "too large to read": _too_large,
    "nested past the recursion limit": _nested,
}


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], bucket: Bucket) -> OrionServer:
    seed(bucket, mira())
    seed(bucket, otto())
    return orion_on_bucket()


def _memory_tool_offered(request: dict[str, object]) -> bool:
    tools = request.get("tools") or []
    assert isinstance(tools, list)
    return any(isinstance(t, dict) and t.get("name") == "memory" for t in tools)


@pytest.mark.parametrize("broken", BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_profile_keeps_its_marks_through_a_thread_a_turn_and_a_forget(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    broken: Callable[[], str],
) -> None:
    otto_before = {key: bucket.read(key) for key in otto()}
    # Her Home tab was open (listing the conversation) when her profile broke.
    view = open_home(orion, slack, USER, DM)
    content = broken()
    bucket.write(PROFILE, content)

    # A new thread: greeted; a message in it: answered, without memory, and told so.
    thread_ts, greeting = open_thread(orion, slack, USER, DM)
    assert greeting
    claude.reply(ANSWER)
    conversation.post_user_message(orion, slack, USER, DM, thread_ts, "Plan my week, please.")
    conversation.wait_for_answer(slack, DM, thread_ts, ANSWER)
    orion.wait_idle()
    [request] = conversation.main_requests(claude, orion)
    assert not _memory_tool_offered(request), "nothing of the turn can be kept"
    streamed = [c.args for m in STREAM_CALLS for c in slack.calls_to(m) if c.args["channel"] == DM]
    shown = json.dumps(streamed)
    assert "answering without all of it" in shown

    # Forget on the conversation her Home tab listed: it goes, the profile stays as it was.
    click(orion, slack, USER, view, ACTION_FORGET_CONVERSATION, THREAD)
    orion.wait_idle()
    everything = everything_in(bucket)
    assert bucket.read(PROFILE) == content, "written over, its erasure marks would be gone"
    assert layout.conversation_key(USER, THREAD) not in everything
    assert [key for key, text in everything.items() if SUMMARY in text] == []
    assert layout.conversation_key(USER, thread_ts) in everything, "the new thread is hers"

    # The operator is told, with the event's ids, and never what the profile holds.
    unreadable = orion.logged(log_events.MEMORY_RECORD_UNREADABLE)
    assert unreadable and all(line["severity"] == "ERROR" for line in unreadable)
    assert {(line["file"], line.get("user")) for line in unreadable} == {("profile", USER)}
    assert all(line.get("trace_id") for line in unreadable)
    without = orion.logged(log_events.MEMORY_WITHOUT_MEMORY)
    assert [line["reason"] for line in without] == ["profile unreadable"]
    logged = json.dumps(orion.log_lines())
    assert TITLE not in logged and ERASED_AT.isoformat() not in logged
    assert orion.http.get("/healthz").status_code == 200

    # Forget everything replaces it with that erasure's mark; Otto's memory is his.
    before = len(orion.logged(log_events.MEMORY_FORGET))
    click(orion, slack, USER, open_home(orion, slack, USER, DM), ACTION_FORGET_EVERYTHING)
    slack.wait_for(lambda: len(orion.logged(log_events.MEMORY_FORGET)) > before, what="erasure")
    orion.wait_idle()
    assert left_of(bucket, USER) == {}
    mark = layout.profile_of(bucket.read(PROFILE))
    assert mark.erased_at is not None and mark.erased_at > UPDATED
    assert {key: bucket.read(key) for key in otto()} == otto_before

    # And from then on she is remembered again.
    thread_ts, _ = open_thread(orion, slack, USER, DM)
    claude.reply("Noted.")
    conversation.post_user_message(orion, slack, USER, DM, thread_ts, "Call me Mira.")
    conversation.wait_for_answer(slack, DM, thread_ts, "Noted.")
    orion.wait_idle()
    assert _memory_tool_offered(conversation.main_requests(claude, orion)[-1])
    assert "Mira" in (bucket.read(preferences_key(USER)) or ""), "what she says is kept"


def test_forgetting_a_conversation_while_orion_answers_in_it_with_a_broken_profile(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    view = open_home(orion, slack, USER, DM)
    content = _cut_short()
    bucket.write(PROFILE, content)
    # A follow-up in the old conversation; she forgets it while Claude is answering.
    answering = claude.hold()
    claude.reply(ANSWER)
    calls = len(claude.calls)
    conversation.post_user_message(orion, slack, USER, DM, THREAD, "Where were we on billing?")
    claude.wait_for(lambda: len(claude.calls) > calls, what="the turn's Claude call")
    click(orion, slack, USER, view, ACTION_FORGET_CONVERSATION, THREAD)
    answering.set()

    conversation.wait_for_answer(slack, DM, THREAD, ANSWER)
    orion.wait_idle()
    everything = everything_in(bucket)
    assert layout.conversation_key(USER, THREAD) not in everything, "the turn wrote it back"
    assert [key for key, text in everything.items() if SUMMARY in text or ANSWER in text] == []
    assert bucket.read(PROFILE) == content


def test_a_thread_start_over_a_broken_profile_saves_nothing_after_forget_everything(
    orion: OrionServer, slack: FakeSlack, bucket: Bucket
) -> None:
    bucket.write(PROFILE, _cut_short())
    # The greeting is out; the thread start is held before it settles, and she erases
    # everything meanwhile (which makes her profile readable again: the erasure's mark).
    held = slack.hold("assistant.threads.setSuggestedPrompts")
    thread_ts, _ = open_thread(orion, slack, USER, DM)
    before = len(orion.logged(log_events.MEMORY_FORGET))
    click(orion, slack, USER, open_home(orion, slack, USER, DM), ACTION_FORGET_EVERYTHING)
    slack.wait_for(lambda: len(orion.logged(log_events.MEMORY_FORGET)) > before, what="erasure")
    held.set()

    orion.wait_logged(log_events.SLACK_CONVERSATION_ERASED_SINCE_START)
    orion.wait_idle()
    assert bucket.read(layout.conversation_key(USER, thread_ts)) is None
    assert left_of(bucket, USER) == {}
    erased_at = layout.profile_of(bucket.read(PROFILE)).erased_at
    assert erased_at is not None and erased_at > datetime.now(UTC) - timedelta(minutes=5)


def test_a_channel_whose_profile_cannot_be_read_is_answered_and_keeps_nothing(
    orion_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
) -> None:
    set_up_channels(slack)
    orion = orion_on_bucket()
    room = channel(PUBLIC)
    # The channel was erased once (Orion removed, then added back); its profile, which
    # says when, has since broken.
    broken = json.dumps({"version": 2, "erased_at": ERASED_AT.isoformat(), "mode": {}})[:-9]
    bucket.write(room.profile_key, broken)

    claude.reply("Noted.")
    said = thread_of(mention(orion, slack, BEN, PUBLIC, "Remember: the launch is on Tuesday."))
    in_channel.wait_for_answer(slack, PUBLIC, said, "Noted.")
    orion.wait_idle()
    # An admin's choice for the channel is refused rather than written over it.
    assert shown_text(command(orion, slack, ADMIN, PUBLIC, "channel answers")) == UNAVAILABLE
    orion.wait_idle()

    assert [name for name in bucket.names() if name.startswith(room.prefix)] == [room.profile_key]
    assert bucket.read(room.profile_key) == broken
    unreadable = orion.logged(log_events.MEMORY_RECORD_UNREADABLE)
    assert unreadable and {line["file"] for line in unreadable} == {"profile"}
    assert orion.http.get("/healthz").status_code == 200
