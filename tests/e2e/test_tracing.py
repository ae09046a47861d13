"""Each handled event is a Langfuse trace: a root span, the turn, and Claude's generation."""

from __future__ import annotations

from tests import log_events
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer
from tests.span_log import SpanLog

USER, CHANNEL = "U0CAROL", "D0CAROL"


def test_a_turn_is_traced_with_user_thread_and_generation(
    spans: SpanLog, orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = slack.new_ts()
    claude.reply("Traced answer.")
    ts = slack.add_user_message(CHANNEL, thread_ts, USER, "trace me")
    orion.post_event(events.user_message_in_thread(USER, CHANNEL, thread_ts, "trace me", ts=ts))
    slack.wait_for(
        lambda: [m for m in slack.bot_messages(CHANNEL, thread_ts) if not m.streaming],
        what="the answer",
    )
    slack.wait_for(lambda: spans.named("slack.user_message"), what="the root span")

    [root] = spans.named("slack.user_message")
    root_attributes = spans.attributes(root)
    assert root_attributes["user.id"] == USER
    assert root_attributes["session.id"] == thread_ts
    [turn] = spans.named("agent.turn")
    [generation] = spans.named("agent.claude")
    assert turn.context.trace_id == root.context.trace_id == generation.context.trace_id
    attributes = spans.attributes(generation)
    assert attributes["langfuse.observation.type"] == "generation"
    assert attributes["langfuse.observation.model.name"] == orion.settings.anthropic_model
    assert "trace me" in str(attributes["langfuse.observation.input"])
    assert "Traced answer." in str(attributes["langfuse.observation.output"])
    # Every call's usage, with what the prompt cache read and wrote (here, a first call:
    # the prompt up to the conversation's breakpoint is written, nothing read).
    usage = attributes["langfuse.observation.usage_details"]
    assert usage["output"] > 0 and usage["cache_read_input_tokens"] == 0
    assert usage["cache_creation_input_tokens"] > 0


def test_feedback_is_one_score_on_the_rated_answers_trace(
    spans: SpanLog, orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = slack.new_ts()
    claude.reply("An answer worth rating.")
    ts = slack.add_user_message(CHANNEL, thread_ts, USER, "rate me")
    orion.post_event(events.user_message_in_thread(USER, CHANNEL, thread_ts, "rate me", ts=ts))
    [answer] = slack.wait_for(
        lambda: [m for m in slack.bot_messages(CHANNEL, thread_ts) if not m.streaming],
        what="the answer",
    )
    slack.wait_for(lambda: spans.named("slack.user_message"), what="the answer's trace")
    [root] = spans.named("slack.user_message")
    answer_trace = format(root.context.trace_id, "032x")

    def click(value: str) -> None:
        payload = events.block_actions(
            USER, CHANNEL, answer.ts, "feedback", value, thread_ts=thread_ts
        )
        assert orion.post_form(events.form_body(payload)).status_code == 200

    for value in ("bad", "bad"):  # a double click
        click(value)
    slack.wait_for(
        lambda: len(orion.logged(log_events.SLACK_FEEDBACK_DONE)) == 2, what="both clicks"
    )
    [score] = spans.scores()
    assert (score["traceId"], score["name"], score["value"]) == (answer_trace, "user_feedback", 0)

    click("good")  # a change of mind
    slack.wait_for(lambda: len(orion.logged(log_events.SLACK_FEEDBACK_DONE)) == 3, what="the third")
    [score] = spans.scores()
    assert score["traceId"] == answer_trace and score["value"] == 1
