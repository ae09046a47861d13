"""Slack as the attacker, on the Agent messaging experience: a Stop (`agent_session_stopped`)
signed for one person, naming another person's DM and thread while Orion answers them there.

Found by the attacker (round 9): the Stop's `user` was never looked at. Mira's Stop naming
Otto's DM cut Otto's answer short and posted "Stopped. Ask again whenever you're ready." in
his thread. A DM is one person's: a Stop there ends only that person's own answer. Otto's
answer now arrives whole, nothing is posted in his thread, and the refusal is logged.

Found by the attacker (round 10): the same Stop delivered to an instance NOT answering Otto
(instances share nothing but the bucket) still posted the confirmation in his thread and set
his session `active` while his answer streamed on. Nothing there vouches for the thread, so
such a Stop is confirmed only in the DM Slack says is the Stop's person's with Orion
(`conversations.open`, the scope Orion already holds): the records would not do, as a new
conversation's is written only as its first answer ends, and that is when people press Stop.
Orion sets an agent session only in the DM, and Slack shows Stop only on a session at work,
so a Stop naming a channel thread where nothing runs here confirms nothing and creates no
session there.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.slack.agent_view import STOPPED_CONFIRMATION
from tests import log_events
from tests.e2e.conversation import LONG_ANSWER, finished
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings

OTTO, OTTO_DM = "U0OTTO", "D0OTTO"
MIRA = "U0MIRA"
CHANNEL = "C0PLANS"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(agent_view=True) as fake:
        yield fake


@pytest.fixture
def orion(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Iterator[OrionServer]:
    settings = make_settings(slack, claude, memory_dir=memory_dir, slack_experience="agent")
    with OrionServer(settings) as server:
        yield server


@pytest.fixture
def other(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Iterator[OrionServer]:
    """A second instance: the same Slack app and memory, none of the first's turns."""
    settings = make_settings(slack, claude, memory_dir=memory_dir, slack_experience="agent")
    with OrionServer(settings) as server:
        yield server


def _otto_answering(
    slack: FakeSlack, orion: OrionServer, claude: FakeClaude
) -> tuple[str, str, threading.Event]:
    """Otto's question answered by `orion`, its first words shown and the rest held."""
    rest = threading.Event()
    claude.reply(LONG_ANSWER, held=rest)
    question = "Can you outline the launch plan?"
    thread_ts = slack.add_user_message(OTTO_DM, None, OTTO, question)
    assert orion.post_event(events.top_level_dm(OTTO, OTTO_DM, question, ts=thread_ts)).is_success
    [streaming] = slack.wait_for(
        lambda: [m for m in slack.bot_messages(OTTO_DM, thread_ts) if m.text],
        what="the first part of Otto's answer",
    )
    return thread_ts, streaming.ts, rest


def _statuses(slack: FakeSlack, channel: str, thread_ts: str) -> list[str]:
    session = slack.session(channel, thread_ts)
    return list(session.statuses) if session is not None else []


def test_a_stop_signed_for_someone_else_reaching_another_instance_leaves_the_dm_alone(
    orion: OrionServer, other: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts, streaming_ts, rest = _otto_answering(slack, orion, claude)

    forged = events.agent_session_stopped(MIRA, OTTO_DM, thread_ts, [streaming_ts])
    assert other.post_event(forged).status_code == 200
    other.wait_handled(forged["event_id"])
    # While Otto's answer streams on, his session still shows Orion at work.
    assert _statuses(slack, OTTO_DM, thread_ts) == ["processing"]
    rest.set()

    slack.wait_for(lambda: LONG_ANSWER in finished(slack, OTTO_DM, thread_ts), what="the answer")
    orion.wait_idle()
    other.wait_idle()
    assert [m.text for m in slack.bot_messages(OTTO_DM, thread_ts)] == [LONG_ANSWER]
    assert STOPPED_CONFIRMATION not in [
        c.args.get("text") for c in slack.calls_to("chat.postMessage")
    ]
    assert _statuses(slack, OTTO_DM, thread_ts) == ["processing", "active"]
    [refused] = other.logged(log_events.SLACK_AGENT_SESSION_STOPPED_NOT_THEIRS)
    assert refused["running_here"] is False


def test_the_persons_own_stop_reaching_another_instance_is_still_confirmed(
    orion: OrionServer, other: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts, _, rest = _otto_answering(slack, orion, claude)

    stop = events.agent_session_stopped(
        OTTO, OTTO_DM, thread_ts, slack.stop_streams(OTTO_DM, thread_ts)
    )
    assert other.post_event(stop).status_code == 200
    rest.set()

    slack.wait_for(
        lambda: STOPPED_CONFIRMATION in finished(slack, OTTO_DM, thread_ts), what="the Stop's line"
    )
    orion.wait_idle()
    other.wait_idle()
    shown, confirmation = slack.bot_messages(OTTO_DM, thread_ts)
    assert shown.text != LONG_ANSWER and LONG_ANSWER.startswith(shown.text)
    assert confirmation.text == STOPPED_CONFIRMATION
    assert _statuses(slack, OTTO_DM, thread_ts)[-1] == "active"
    assert other.logged(log_events.SLACK_AGENT_SESSION_STOPPED_NOT_THEIRS) == []


def test_a_stop_naming_a_channel_thread_where_nothing_runs_posts_nothing_there(
    orion: OrionServer, slack: FakeSlack
) -> None:
    thread_ts = slack.add_user_message(CHANNEL, None, MIRA, "Standup notes, anyone?")

    stop = events.agent_session_stopped(MIRA, CHANNEL, thread_ts)
    assert orion.post_event(stop).status_code == 200
    orion.wait_handled(stop["event_id"])

    assert slack.calls_to("chat.postMessage") == []
    assert slack.session(CHANNEL, thread_ts) is None  # no session created in the channel
    assert len(orion.logged(log_events.SLACK_AGENT_SESSION_STOPPED_NOT_THEIRS)) == 1


def test_a_stop_signed_for_someone_else_does_not_end_an_answer_in_another_persons_dm(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts, streaming_ts, rest = _otto_answering(slack, orion, claude)

    forged = events.agent_session_stopped(MIRA, OTTO_DM, thread_ts, [streaming_ts])
    assert orion.post_event(forged).status_code == 200
    orion.wait_handled(forged["event_id"])
    rest.set()

    slack.wait_for(lambda: LONG_ANSWER in finished(slack, OTTO_DM, thread_ts), what="the answer")
    orion.wait_idle()
    assert [m.text for m in slack.bot_messages(OTTO_DM, thread_ts)] == [LONG_ANSWER]
    posted = [call.args.get("text") for call in slack.calls_to("chat.postMessage")]
    assert STOPPED_CONFIRMATION not in posted
    assert orion.logged(log_events.SLACK_AGENT_SESSION_STOPPED_TURN) == []
    assert len(orion.logged(log_events.SLACK_AGENT_SESSION_STOPPED_NOT_THEIRS)) == 1
