"""A person talks to Orion over the HTTP Events API: what they see in the thread."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from app.agent.errors import BUSY, MISCONFIGURED, OVERLOADED
from app.memory.homes import person, preferences_key
from app.slack.conversation.greeting import GENERIC_GREETING, SUGGESTED_PROMPTS
from tests import layout, log_events
from tests.e2e import conversation
from tests.e2e.conversation import main_requests
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, message_text
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import ANTHROPIC_KEY, OrionServer, make_settings

USER, CHANNEL = "U0ALICE", "D0ALICE"


def _open_thread(orion: OrionServer, slack: FakeSlack) -> str:
    return conversation.open_thread(orion, slack, USER, CHANNEL)[0]


def _ask(orion: OrionServer, slack: FakeSlack, thread_ts: str, text: str) -> None:
    conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, text)


def _wait_answers(slack: FakeSlack, thread_ts: str, count: int) -> list[str]:
    """Orion's first `count` finished replies after its greeting, once they are there."""
    return conversation.wait_for_messages(slack, CHANNEL, thread_ts, count, after_greeting=True)


def test_url_verification_echoes_the_challenge(orion: OrionServer) -> None:
    response = orion.post_event(events.url_verification("challenge-123"))
    assert response.status_code == 200
    assert response.json() == {"challenge": "challenge-123"}


def test_healthz_answers(orion: OrionServer) -> None:
    assert orion.http.get("/healthz").status_code == 200


def test_bad_signature_is_rejected_and_nothing_is_posted(
    orion: OrionServer, slack: FakeSlack
) -> None:
    thread_ts = slack.new_ts()
    forged = events.assistant_thread_started(USER, CHANNEL, thread_ts)
    response = orion.post_event(forged, secret="not-the-secret")
    assert response.status_code == 401
    # A genuine event after it is handled to its end: the forged one, had it been accepted,
    # would have been acknowledged first and counted in flight until its own end.
    _open_thread(orion, slack)
    orion.wait_idle()
    assert orion.handled(forged["event_id"]) == []
    assert slack.thread(CHANNEL, thread_ts) == []


def test_stale_timestamp_is_rejected_and_nothing_is_posted(
    orion: OrionServer, slack: FakeSlack
) -> None:
    thread_ts = slack.new_ts()
    six_minutes_ago = int(time.time()) - 6 * 60
    replayed = events.assistant_thread_started(USER, CHANNEL, thread_ts)
    response = orion.post_event(replayed, timestamp=six_minutes_ago)
    assert response.status_code == 401
    # As above: a genuine event after it is handled to its end, and the replayed one is not.
    _open_thread(orion, slack)
    orion.wait_idle()
    assert orion.handled(replayed["event_id"]) == []
    assert slack.thread(CHANNEL, thread_ts) == []
    assert slack.statuses(CHANNEL, thread_ts) == []


def test_thread_start_greets_and_suggests_prompts(orion: OrionServer, slack: FakeSlack) -> None:
    thread_ts = _open_thread(orion, slack)
    # A first-time person: the plain welcome, alone in the thread, and the usual prompts.
    assert [m.text for m in slack.bot_messages(CHANNEL, thread_ts)] == [GENERIC_GREETING]
    prompts = slack.wait_for(lambda: slack.suggested_prompts(CHANNEL, thread_ts))
    assert prompts[-1].prompts == SUGGESTED_PROMPTS


def test_question_gets_claudes_answer_with_feedback_buttons(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = _open_thread(orion, slack)
    claude.reply("The **capital of France** is Paris.")
    _ask(orion, slack, thread_ts, "What is the capital of France?")

    [answer] = _wait_answers(slack, thread_ts, 1)
    assert answer == "The **capital of France** is Paris."
    final = slack.bot_messages(CHANNEL, thread_ts)[-1]
    assert any(block.get("type") == "context_actions" for block in final.blocks or [])
    # Streamed from its first words on: the message opened with the start of the answer.
    [started] = slack.calls_to("chat.startStream")
    assert started.args["thread_ts"] == thread_ts
    [first_words] = conversation.opening_words(slack, CHANNEL)
    assert answer.startswith(first_words)
    statuses = [update.status for update in slack.statuses(CHANNEL, thread_ts)]
    assert statuses[0] == "Restoring your preferences..."
    assert "is thinking..." in statuses
    [request] = conversation.main_requests(claude, orion)
    assert message_text(request["messages"][-1]) == "What is the capital of France?"
    assert request["stream"] is True
    # One INFO line for the event, at its end, with how long it took.
    [done] = slack.wait_for(
        lambda: [
            x
            for x in orion.log_lines()
            if x["message"].startswith(log_events.SLACK_USER_MESSAGE) and x["severity"] == "INFO"
        ],
        what="the event's log line",
    )
    assert done["message"] == log_events.SLACK_USER_MESSAGE_DONE and done["duration_ms"] > 0


def test_long_answer_is_streamed_while_claude_writes_it(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = _open_thread(orion, slack)
    long_answer = conversation.LONG_ANSWER
    claude.reply(long_answer, chunk_delay=0.3)
    _ask(orion, slack, thread_ts, "Tell me a lot")

    def partly_shown() -> list[str]:
        return [m.text for m in slack.bot_messages(CHANNEL, thread_ts) if m.streaming and m.text]

    [shown] = slack.wait_for(partly_shown, what="part of the answer, while Claude still writes")
    assert long_answer.startswith(shown) and len(shown) < len(long_answer)
    assert _wait_answers(slack, thread_ts, 1) == [long_answer]
    assert len(slack.calls_to("chat.startStream")) == 1 and slack.calls_to("chat.appendStream")
    final = slack.bot_messages(CHANNEL, thread_ts)[-1]
    assert any(block.get("type") == "context_actions" for block in final.blocks or [])


def test_second_question_carries_the_first_exchange(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = _open_thread(orion, slack)
    claude.reply("Paris.")
    _ask(orion, slack, thread_ts, "Capital of France?")
    _wait_answers(slack, thread_ts, 1)
    claude.reply("About 2.1 million people.")
    _ask(orion, slack, thread_ts, "How many people live there?")
    _wait_answers(slack, thread_ts, 2)

    messages = conversation.main_requests(claude, orion)[-1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"] == "Capital of France?"
    assert messages[1]["content"] == "Paris."
    assert message_text(messages[2]) == "How many people live there?"


def test_claude_overloaded_ends_in_a_friendly_message_and_the_next_one_works(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = _open_thread(orion, slack)
    claude.fail(status=529, error_type="overloaded_error", message="Overloaded")
    _ask(orion, slack, thread_ts, "Are you there?")
    [apology] = _wait_answers(slack, thread_ts, 1)
    # Claude is busy for everyone: not worded as Orion's own rate limit.
    assert OVERLOADED in apology and BUSY not in apology
    assert "overloaded_error" not in apology and "529" not in apology

    claude.reply("Yes, I'm back.")
    _ask(orion, slack, thread_ts, "Now?")
    answers = _wait_answers(slack, thread_ts, 2)
    assert answers[-1] == "Yes, I'm back."


@pytest.mark.parametrize(
    ("status", "error_type", "setting"),
    [
        (404, "not_found_error", "ANTHROPIC_MODEL"),
        (401, "authentication_error", "ANTHROPIC_API_KEY"),
    ],
)
def test_a_setting_claude_refuses_is_one_line_in_the_thread_and_named_in_the_log(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    status: int,
    error_type: str,
    setting: str,
) -> None:
    # A mistyped ANTHROPIC_MODEL (or a revoked key): "Please try again" would mend nothing.
    thread_ts = _open_thread(orion, slack)
    claude.fail(status=status, error_type=error_type, message="model: claude-sonet-4")
    _ask(orion, slack, thread_ts, "Are you there?")

    [apology] = _wait_answers(slack, thread_ts, 1)
    assert MISCONFIGURED in apology and "not_found_error" not in apology
    [refused] = orion.wait_logged(log_events.SLACK_CLAUDE_REFUSED)
    assert refused["problem"].startswith(f"{setting}: ")
    assert f"({status} {error_type})" in refused["problem"]
    assert ANTHROPIC_KEY not in json.dumps(orion.log_lines())
    # The service stays up: once the setting is mended, the next message is answered.
    claude.reply("Yes, I'm here.")
    _ask(orion, slack, thread_ts, "Now?")
    assert _wait_answers(slack, thread_ts, 2)[-1] == "Yes, I'm here."


def test_a_refused_answer_says_so_in_one_sentence_and_nothing_of_the_turn_is_kept(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    thread_ts = _open_thread(orion, slack)
    claude.refuse("Sure, first you")
    _ask(orion, slack, thread_ts, "Please call me Sam. How do I get into my neighbour's wifi?")

    [answer] = _wait_answers(slack, thread_ts, 1)
    assert answer.startswith("Sure, first you")
    assert "nothing from this message was saved" in answer
    # The preference heard in the message was put back, and no summary was written.
    orion.wait_logged(log_events.MEMORY_REFUSED_TURN_REVERTED)
    [turn_end] = orion.wait_logged(log_events.MEMORY_AFTER_TURN)
    assert turn_end["source"] == "skipped" and turn_end["reason"] == "refusal"
    home = person(USER)
    assert not (memory_dir / preferences_key(USER)).exists()
    profile = memory_dir / home.profile_key
    assert not profile.exists() or layout.summary_of_latest(profile.read_text()) is None
    orion.wait_idle()
    # Nor is the exchange kept as history: the next message is answered without it.
    claude.reply("Happy to help with something else.")
    _ask(orion, slack, thread_ts, "What's on today?")
    _wait_answers(slack, thread_ts, 2)
    sent = [message_text(m) for m in main_requests(claude, orion)[-1]["messages"]]
    assert sent == ["What's on today?"]
    record = json.loads((memory_dir / home.conversation_key(thread_ts)).read_text())
    assert "wifi" not in json.dumps(record) and "Sure, first you" not in json.dumps(record)


def test_an_answer_cut_short_says_how_to_continue(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = _open_thread(orion, slack)
    claude.reply_stopped("Step 1: freeze writes. Step 2: copy the", "max_tokens")
    _ask(orion, slack, thread_ts, "Write the whole migration plan.")

    [answer] = _wait_answers(slack, thread_ts, 1)
    assert answer.startswith("Step 1: freeze writes. Step 2: copy the")
    assert "cut short" in answer and "continue" in answer


def test_top_level_dm_is_acknowledged_without_a_reply(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    # At DEBUG: the listener's one line is logged only then.
    settings = make_settings(slack, claude, memory_dir=memory_dir, log_level="DEBUG")
    with OrionServer(settings) as orion:
        response = orion.post_event(events.top_level_dm(USER, CHANNEL, "hello?"))
        # Bolt's own answer: a listener matched (no 404 for Slack to retry on).
        assert response.status_code == 200
        # The listener runs after the ack; its one line is all it does.
        orion.wait_logged(log_events.SLACK_MESSAGE_IGNORED)
        orion.wait_idle()
    assert not slack.calls_to("chat.postMessage")


def test_a_tab_orion_shows_nothing_on_is_acknowledged_and_changes_nothing(
    orion: OrionServer, slack: FakeSlack
) -> None:
    for tab in ("about", "messages"):  # assistant_view shows nothing on the Messages tab
        response = orion.post_event(events.app_home_opened(USER, CHANNEL, tab=tab))
        assert response.status_code == 200  # a listener matched: nothing for Slack to retry
    orion.wait_idle()
    assert not slack.calls_to("views.publish") and not slack.calls_to("chat.postMessage")


def test_feedback_button_is_acknowledged(orion: OrionServer, slack: FakeSlack) -> None:
    thread_ts = slack.new_ts()
    payload = events.block_actions(
        USER, CHANNEL, slack.new_ts(), "feedback", "good", thread_ts=thread_ts
    )
    response = orion.post_form(events.form_body(payload))
    assert response.status_code == 200
    # Only the person who clicked sees the thanks, in the thread they clicked in.
    [thanks] = slack.wait_for(lambda: slack.calls_to("chat.postEphemeral"), what="the thanks")
    assert thanks.args["user"] == USER and thanks.args["thread_ts"] == thread_ts
    assert "Thanks for the feedback" in thanks.args["text"]
