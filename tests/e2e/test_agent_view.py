"""Slack's Agent messaging experience (agent_view), end to end through signed events.

Orion runs with `SLACK_EXPERIENCE=agent` against a fake Slack that behaves as for an
agent_view app (sessions with an enum status, prompts at the top of the Messages tab):
a conversation starts as the person's own top-level DM, and Orion answers in its thread.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.agent.errors import BUSY, GENERIC, UNREACHABLE
from app.memory.homes import preferences_key
from app.slack.conversation.greeting_words import GREETING_WORDS
from app.slack.home.memory_view import ACTION_FORGET_PREFERENCE
from tests import log_events
from tests.e2e.conversation import (
    LONG_ANSWER,
    finished,
    main_requests,
    opening_words,
    remembered,
)
from tests.e2e.memory_bucket import Bucket
from tests.e2e.test_memory_controls import click, open_home
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, last_user_text, message_text
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack, Message
from tests.orion_server import OrionServer, make_settings

USER, CHANNEL = "U0IRIS", "D0IRIS"
OTHER_USER, OTHER_CHANNEL = "U0OSCAR", "D0OSCAR"
PREFERENCES = {"name": "Iris", "language": "French", "response_style": "bullet points"}
QUESTION = "Can you outline the launch plan for the new billing page?"
STOPPED = "Stopped. Ask again whenever you're ready."


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(agent_view=True) as fake:
        yield fake


@pytest.fixture
def orion(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Iterator[OrionServer]:
    preferences = memory_dir / preferences_key(USER)
    preferences.parent.mkdir(parents=True)
    preferences.write_text(json.dumps(PREFERENCES))
    settings = make_settings(slack, claude, memory_dir=memory_dir, slack_experience="agent")
    with OrionServer(settings) as server:
        yield server


def start_conversation(
    orion: OrionServer, slack: FakeSlack, text: str, user: str = USER, channel: str = CHANNEL
) -> dict[str, Any]:
    """The person writes a top-level DM; returns the event (its ts is the conversation)."""
    ts = slack.add_user_message(channel, None, user, text)
    payload = events.top_level_dm(user, channel, text, ts=ts)
    assert orion.post_event(payload).status_code == 200
    return payload


def session_statuses(slack: FakeSlack, thread_ts: str, channel: str = CHANNEL) -> list[str]:
    session = slack.session(channel, thread_ts)
    return session.statuses if session is not None else []


def test_a_first_dm_gets_a_personal_streamed_answer_in_its_thread(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    claude.reply(LONG_ANSWER)

    payload = start_conversation(orion, slack, QUESTION)
    thread_ts = payload["event"]["ts"]
    slack.wait_for(lambda: LONG_ANSWER in finished(slack, CHANNEL, thread_ts), what="answer")

    # Streamed into the thread of the person's own message, with feedback buttons.
    [answer] = slack.bot_messages(CHANNEL, thread_ts)
    assert answer.thread_ts == thread_ts, "in the thread of the person's own message"
    [started] = slack.calls_to("chat.startStream")
    assert started.args["thread_ts"] == thread_ts
    [first_words] = opening_words(slack, CHANNEL)
    assert LONG_ANSWER.startswith(first_words), "streamed from the first words"
    assert any(block["type"] == "context_actions" for block in answer.blocks)
    # The memories were restored at once and reached Claude: the greeting folds into it.
    [request] = main_requests(claude, orion)
    assert last_user_text(request) == QUESTION
    assert "French" in remembered(request) and "Iris" in remembered(request)
    # The session: processing while thinking, active when done, named after the question.
    slack.wait_for(lambda: session_statuses(slack, thread_ts)[-1:] == ["active"])
    assert session_statuses(slack, thread_ts) == ["processing", "active"]
    session = slack.session(CHANNEL, thread_ts)
    assert session is not None and session.titles == [QUESTION]
    # No free-text assistant status line, and nothing posted besides the answer.
    assert slack.statuses(CHANNEL, thread_ts) == []
    assert [m.text for m in slack.messages(CHANNEL) if m.is_bot] == [LONG_ANSWER]


def test_a_reply_in_the_conversation_restores_the_memory_and_reads_no_slack_history(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    claude.reply("Here is the outline.")
    payload = start_conversation(orion, slack, QUESTION)
    thread_ts = payload["event"]["ts"]
    slack.wait_for(lambda: finished(slack, CHANNEL, thread_ts), what="the first answer")
    slack.wait_for(lambda: orion.logged(log_events.SLACK_AGENT_MESSAGE_DONE))

    claude.reply("Thursday.")
    ts = slack.add_user_message(CHANNEL, thread_ts, USER, "And when do we ship it?")
    reply = events.user_message_in_thread(USER, CHANNEL, thread_ts, "And when do we ship it?", ts)
    assert orion.post_event(reply).status_code == 200
    slack.wait_for(lambda: "Thursday." in finished(slack, CHANNEL, thread_ts), what="reply")
    slack.wait_for(lambda: len(session_statuses(slack, thread_ts)) == 4, what="active again")

    second = main_requests(claude, orion)[-1]
    assert "French" in remembered(second)
    before_turn = orion.logged(log_events.MEMORY_BEFORE_TURN)
    assert before_turn[-1]["source"] == "restored", "restored beside the claim"
    # History: the question that opened the conversation and Orion's first answer, from
    # Orion's own transcript (Slack's thread is not read at all).
    assert [(m["role"], message_text(m)) for m in second["messages"]] == [
        ("user", QUESTION),
        ("assistant", "Here is the outline."),
        ("user", "And when do we ship it?"),
    ]
    assert slack.calls_to("conversations.replies") == []
    session = slack.session(CHANNEL, thread_ts)
    assert session is not None and session.titles == [QUESTION], "named once"
    assert session.statuses == ["processing", "active", "processing", "active"]


def test_a_failed_answer_apologises_and_never_leaves_the_session_spinning(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    claude.fail(529, "overloaded_error", "Overloaded")

    thread_ts = start_conversation(orion, slack, QUESTION)["event"]["ts"]
    [apology] = slack.wait_for(lambda: finished(slack, CHANNEL, thread_ts), what="apology")
    slack.wait_for(lambda: session_statuses(slack, thread_ts)[-1:] == ["active"])

    assert "Sorry" in apology and "overloaded_error" not in apology
    assert session_statuses(slack, thread_ts) == ["processing", "active"]


def test_opening_the_messages_tab_sets_prompts_once_and_posts_nothing(
    orion: OrionServer, slack: FakeSlack
) -> None:
    for _ in range(2):
        assert orion.post_event(events.app_home_opened(USER, CHANNEL)).status_code == 200
    slack.wait_for(lambda: len(orion.logged(log_events.SLACK_MESSAGES_TAB_OPENED_DONE)) == 2)

    [prompts] = slack.messages_tab_prompts(CHANNEL)
    [call] = slack.calls_to("assistant.threads.setSuggestedPrompts")
    assert "thread_ts" not in call.args, "agent_view's prompts belong to the tab"
    assert prompts.title == "Bonjour Iris, comment puis-je vous aider ?"  # she asked for French
    french = GREETING_WORDS["French"]
    assert prompts.prompts == [french.suggested()[0], french.review(), french.suggested()[2]]
    assert slack.messages(CHANNEL) == [], "opening the DM never posts anything"
    assert slack.calls_to("agents.sessions.setStatus") == []


def test_a_forgotten_name_leaves_the_messages_tabs_prompts_the_next_time_it_opens(
    orion: OrionServer, slack: FakeSlack
) -> None:
    assert orion.post_event(events.app_home_opened(USER, CHANNEL)).status_code == 200
    slack.wait_for(lambda: slack.messages_tab_prompts(CHANNEL), what="the tab's prompts")
    view = open_home(orion, slack, USER, CHANNEL)
    click(orion, slack, USER, view, ACTION_FORGET_PREFERENCE, "name")

    assert orion.post_event(events.app_home_opened(USER, CHANNEL)).status_code == 200
    prompts = slack.wait_for(
        lambda: (p := slack.messages_tab_prompts(CHANNEL)) and len(p) == 2 and p,
        what="the tab's prompts again",
    )
    assert "Iris" in prompts[0].title and "Iris" not in prompts[1].title


@pytest.mark.parametrize(
    "slack_ended_the_stream", [True, False], ids=["slack_ended_it", "still_streaming"]
)
def test_stop_keeps_what_was_shown_confirms_in_one_line_and_ends_active(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, slack_ended_the_stream: bool
) -> None:
    rest = threading.Event()  # the answer's first words go out; the rest waits for the Stop
    claude.reply(LONG_ANSWER, held=rest)
    payload = start_conversation(orion, slack, QUESTION)
    thread_ts = payload["event"]["ts"]
    [streaming] = slack.wait_for(
        lambda: [m for m in slack.bot_messages(CHANNEL, thread_ts) if m.text],
        what="the first part of the answer",
    )

    if slack_ended_the_stream:
        slack.expire_streams()  # as Slack does with the streams it names in the event
    stop = events.agent_session_stopped(USER, CHANNEL, thread_ts, [streaming.ts])
    assert orion.post_event(stop).status_code == 200
    # The confirmation, and the answer's stream ended (two calls at once, in either order).
    shown, confirmation = slack.wait_for(
        lambda: _ended(slack.bot_messages(CHANNEL, thread_ts)), what="the stop's confirmation"
    )
    rest.set()  # Claude would write on: nothing more of it may show
    # The turn's own end sets the session active (the stream's end may have done it first).
    slack.wait_for(
        lambda: slack.calls_to("agents.sessions.setStatus")[-1].args["status"] == "active"
    )

    # What was streamed stays, unfinished, and no longer streaming; one line says so.
    assert shown.ts == streaming.ts and not shown.streaming
    assert shown.text and shown.text != LONG_ANSWER and LONG_ANSWER.startswith(shown.text)
    assert confirmation.text == STOPPED and confirmation.thread_ts == thread_ts
    # The session: processing, then active (a stream Orion ended sets it too, as Slack's
    # chat.stopStream does by default), and active last once the confirmation is in.
    first, *after = session_statuses(slack, thread_ts)
    assert first == "processing" and after and set(after) == {"active"}
    [posted] = [c for c in slack.calls_to("chat.postMessage") if c.args["text"] == STOPPED]
    assert posted.at < slack.calls_to("agents.sessions.setStatus")[-1].at
    [stopped] = orion.logged(log_events.SLACK_AGENT_SESSION_STOPPED_TURN)
    assert stopped["running_here"] is True
    slack.wait_for(lambda: orion.logged(log_events.SLACK_AGENT_MESSAGE_DONE))
    # Nothing learned from the stopped turn, no apology, and nothing more written to it.
    ended = [
        (line["written"], line.get("reason")) for line in orion.logged(log_events.MEMORY_AFTER_TURN)
    ]
    assert ended in ([], [(False, "unfinished")])
    assert [r["model"] for r in claude.requests] == [orion.settings.anthropic_model]
    after = slack.bot_messages(CHANNEL, thread_ts)
    assert [m.text for m in after] == [shown.text, STOPPED]
    assert not [apology for apology in (BUSY, UNREACHABLE, GENERIC) if apology in after[0].text]


def test_stop_before_the_first_words_is_confirmed_alone(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    claude.delay(10)  # Claude has not written anything yet when the person stops
    claude.reply("Too late to be shown.")
    thread_ts = start_conversation(orion, slack, QUESTION)["event"]["ts"]
    claude.wait_for(lambda: claude.requests, what="the request to Claude")

    assert orion.post_event(events.agent_session_stopped(USER, CHANNEL, thread_ts)).is_success
    slack.wait_for(lambda: STOPPED in finished(slack, CHANNEL, thread_ts), what="the stop")
    slack.wait_for(lambda: session_statuses(slack, thread_ts)[-1:] == ["active"])

    # Nothing of the answer was shown: only the stop's line (and the memory restored).
    assert [text for text in finished(slack, CHANNEL, thread_ts) if text] == [STOPPED]
    # Active, by the restore task's stream ending (Slack's default) and the turn's end.
    first, *after = session_statuses(slack, thread_ts)
    assert first == "processing" and after and set(after) == {"active"}
    assert opening_words(slack, CHANNEL) == []
    assert all(task.status != "in_progress" for task in slack.tasks(CHANNEL, thread_ts))


def _two(messages: list[Message]) -> list[Message] | None:
    return messages if len(messages) == 2 else None


def _ended(messages: list[Message]) -> list[Message] | None:
    """The answer and the confirmation, once the answer no longer streams."""
    two = _two(messages)
    return two if two is not None and not two[0].streaming else None


def test_a_stop_after_the_answer_still_leaves_the_session_active(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    claude.reply("Done already.")
    payload = start_conversation(orion, slack, QUESTION)
    thread_ts = payload["event"]["ts"]
    slack.wait_for(lambda: session_statuses(slack, thread_ts)[-1:] == ["active"])
    # After the answer: its turn has ended here too (the session shows active as the
    # answer's stream ends, a moment before; a Stop in that moment still finds it running).
    orion.wait_handled(payload["event_id"])

    assert orion.post_event(events.agent_session_stopped(USER, CHANNEL, thread_ts)).is_success
    slack.wait_for(lambda: orion.logged(log_events.SLACK_AGENT_SESSION_STOPPED_TURN))

    assert orion.logged(log_events.SLACK_AGENT_SESSION_STOPPED_TURN)[0]["running_here"] is False
    # The status is set after that line is logged: waited for, not raced.
    slack.wait_for(
        lambda: session_statuses(slack, thread_ts) == ["processing", "active", "active"],
        what="the session set active again",
    )


def test_a_retried_dm_reaching_a_second_instance_is_answered_once(
    slack: FakeSlack, claude: FakeClaude, bucket: Bucket, gcs_bucket: str
) -> None:
    settings = make_settings(
        slack, claude, gcs_memories_bucket=gcs_bucket, slack_experience="agent"
    )
    claude.reply("One answer.")
    with OrionServer(settings) as first, OrionServer(settings) as second:
        payload = start_conversation(first, slack, QUESTION)
        thread_ts = payload["event"]["ts"]
        # Slack redelivers an event it saw no ack for within 3 s: by then the first
        # instance has claimed it.
        bucket.wait_for(f"events/{payload['event_id']}")
        assert second.post_event(payload, retry_num=1).status_code == 200
        slack.wait_for(lambda: "One answer." in finished(slack, CHANNEL, thread_ts))
        # (Logging is set up per process: the instance started last has every line.)
        slack.wait_for(lambda: len(second.logged(log_events.SLACK_AGENT_MESSAGE_DONE)) == 2)
        [duplicate] = second.logged(log_events.SLACK_EVENT_DUPLICATE)
        assert duplicate["source"] == "claim"

    assert finished(slack, CHANNEL, thread_ts) == ["One answer."]
    assert len(claude.requests) == 1
    assert session_statuses(slack, thread_ts) == ["processing", "active"]
    assert [name for name in bucket.names() if name.startswith("events/")] == [
        f"events/{payload['event_id']}"
    ]


def test_an_event_of_the_other_experience_says_what_to_configure(
    orion: OrionServer, slack: FakeSlack
) -> None:
    thread_ts = slack.open_assistant_thread(CHANNEL)
    for _ in range(2):
        started = events.assistant_thread_started(USER, CHANNEL, thread_ts)
        assert orion.post_event(started).status_code == 200
    [mismatch] = slack.wait_for(lambda: orion.logged(log_events.SLACK_EXPERIENCE_MISMATCH))

    assert mismatch["severity"] == "ERROR"
    assert "SLACK_EXPERIENCE=assistant" in mismatch["hint"]
    assert slack.bot_messages(CHANNEL, thread_ts) == []


def test_with_storage_down_conversations_are_answered_and_the_store_skipped(
    slack: FakeSlack, claude: FakeClaude, gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    settings = make_settings(
        slack,
        claude,
        gcs_memories_bucket=gcs_bucket,
        slack_experience="agent",
        memory_load_timeout_s=0.5,
    )
    gcs_proxy.add_rule("", status=503)  # the bucket is down
    # Two people, so that what the store is asked says whose conversation asked it: work
    # the first one sent before the breaker opened may reach the bucket after it did.
    people = [(USER, CHANNEL), (OTHER_USER, OTHER_CHANNEL)]
    with OrionServer(settings) as orion:
        for n, (user, channel) in enumerate(people, 1):
            claude.reply(f"Answer {n}.")
            event = start_conversation(orion, slack, f"Question {n} of the day?", user, channel)
            thread_ts = event["event"]["ts"]
            slack.wait_for(
                lambda c=channel, t=thread_ts, n=n: f"Answer {n}." in finished(slack, c, t)
            )
            slack.wait_for(
                lambda c=channel, t=thread_ts: session_statuses(slack, t, c)[-1:] == ["active"]
            )
            if n == 1:
                slack.wait_for(lambda: orion.logged(log_events.STORE_UNAVAILABLE))
        orion.wait_idle()

        # Whatever names the second person, their DM, conversation or event.
        second = (OTHER_USER, OTHER_CHANNEL, thread_ts, thread_ts.replace(".", "-"))
        second += (event["event_id"],)
        asked = [r for r in gcs_proxy.requests if any(r.names(name) for name in second)]
        assert asked == [], "the second conversation, once the store was known down, skipped it"
        assert gcs_proxy.requests, "the first one found out"
        assert len(orion.logged(log_events.STORE_UNAVAILABLE)) == 1
        for _, channel in people:
            assert not [m for m in slack.messages(channel) if m.is_bot and "rror" in m.text]


def test_events_orion_has_nothing_to_do_for_are_acknowledged_and_change_nothing(
    orion: OrionServer, slack: FakeSlack
) -> None:
    # Without a listener Bolt answers 404, and Slack retries the event three times.
    renamed = events.event_callback(
        {"type": "agent_session_title_changed", "channel": CHANNEL, "thread_ts": slack.new_ts()}
    )
    before = len(slack.calls)
    for payload in (
        events.app_context_changed(USER, "C0LOOKING"),
        renamed,
        events.app_home_opened(USER, CHANNEL, tab="about"),
    ):
        assert orion.post_event(payload).status_code == 200
    orion.wait_idle()
    # Nothing but Bolt's own check of the token (auth.test, on the first event it serves).
    assert {call.method for call in slack.calls[before:]} <= {"auth.test"}
