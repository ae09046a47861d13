"""Slack as the attacker, with the thumbs under an answer: a click replayed from another
channel, carrying the rated answer's message (its metadata naming that answer's trace).

Found by the attacker (round 9): the trace to score was taken from the click's payload. Mira,
replaying a click on Otto's answer from her own DM, put a score (and her comment) on Otto's
trace in Langfuse. The answer is now read from the channel the click came from, where
Mira's DM holds no answer of Otto's: no score lands on his trace.

Found by the attacker (round 11): the same click naming Otto's DM as the channel it came
from read his answer there and scored it all the same. A DM is one person's: a click in
one counts only from the person Slack says it belongs to (`conversations.open`).
"""

from __future__ import annotations

from app.slack.conversation.reply_stream import ANSWER_METADATA_TYPE
from tests import log_events
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer
from tests.span_log import SpanLog

OTTO, OTTO_DM = "U0OTTO", "D0OTTO"
MIRA, MIRA_DM = "U0MIRA", "D0MIRA"


def _ottos_answer(
    spans: SpanLog, orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> tuple[str, str, str]:
    """Otto's answer in his DM: its thread, its message and its trace."""
    thread_ts = slack.new_ts()
    claude.reply("An answer for Otto.")
    ts = slack.add_user_message(OTTO_DM, thread_ts, OTTO, "help me")
    orion.post_event(events.user_message_in_thread(OTTO, OTTO_DM, thread_ts, "help me", ts=ts))
    [answer] = slack.wait_for(
        lambda: [m for m in slack.bot_messages(OTTO_DM, thread_ts) if not m.streaming],
        what="Otto's answer",
    )
    slack.wait_for(lambda: spans.named("slack.user_message"), what="the answer's trace")
    [root] = spans.named("slack.user_message")
    return thread_ts, answer.ts, format(root.context.trace_id, "032x")


def test_a_click_replayed_from_another_channel_scores_nothing_of_the_answer_it_names(
    spans: SpanLog, orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts, answer_ts, ottos_trace = _ottos_answer(spans, orion, slack, claude)
    shown = {
        "type": "message",
        "ts": answer_ts,
        "thread_ts": thread_ts,
        "metadata": {
            "event_type": ANSWER_METADATA_TYPE,
            "event_payload": {"trace_id": ottos_trace},
        },
    }
    replayed = events.block_actions(
        MIRA, MIRA_DM, answer_ts, "feedback", "bad", thread_ts=thread_ts, message=shown
    )
    assert orion.post_form(events.form_body(replayed)).status_code == 200
    slack.wait_for(lambda: orion.logged(log_events.SLACK_FEEDBACK_DONE), what="the click")
    orion.wait_idle()

    assert [s for s in spans.scores() if s["traceId"] == ottos_trace] == []


def test_a_click_signed_for_someone_else_in_a_persons_dm_scores_nothing_there(
    spans: SpanLog, orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts, answer_ts, ottos_trace = _ottos_answer(spans, orion, slack, claude)

    forged = events.block_actions(MIRA, OTTO_DM, answer_ts, "feedback", "bad", thread_ts=thread_ts)
    assert orion.post_form(events.form_body(forged)).status_code == 200
    slack.wait_for(lambda: orion.logged(log_events.SLACK_FEEDBACK_DONE), what="the click")
    # Otto's own click there still scores his answer.
    own = events.block_actions(OTTO, OTTO_DM, answer_ts, "feedback", "good", thread_ts=thread_ts)
    assert orion.post_form(events.form_body(own)).status_code == 200
    slack.wait_for(lambda: len(orion.logged(log_events.SLACK_FEEDBACK_DONE)) == 2, what="his")
    orion.wait_idle()

    slack.wait_for(
        lambda: [s for s in spans.scores() if s["traceId"] == ottos_trace], what="his score"
    )
    assert [s["value"] for s in spans.scores() if s["traceId"] == ottos_trace] == [1.0]
    thanked = [c.args.get("user") for c in slack.calls_to("chat.postEphemeral")]
    assert thanked == [OTTO], "nothing is said to Mira in Otto's DM"
