"""Slack as the attacker, on the Agent messaging experience: a Stop (`agent_session_stopped`)
signed for one person, naming another person's DM and thread while Orion answers them there.

Found by the attacker (round 9): the Stop's `user` was never looked at. Mira's Stop naming
Otto's DM cut Otto's answer short and posted "Stopped. Ask again whenever you're ready." in
his thread. A DM is one person's: a Stop there ends only that person's own answer. Otto's
answer now arrives whole, nothing is posted in his thread, and the refusal is logged.
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


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(agent_view=True) as fake:
        yield fake


@pytest.fixture
def orion(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Iterator[OrionServer]:
    settings = make_settings(slack, claude, memory_dir=memory_dir, slack_experience="agent")
    with OrionServer(settings) as server:
        yield server


def test_a_stop_signed_for_someone_else_does_not_end_an_answer_in_another_persons_dm(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    rest = threading.Event()  # Otto's answer's first words go out; the rest waits
    claude.reply(LONG_ANSWER, held=rest)
    question = "Can you outline the launch plan?"
    thread_ts = slack.add_user_message(OTTO_DM, None, OTTO, question)
    assert orion.post_event(events.top_level_dm(OTTO, OTTO_DM, question, ts=thread_ts)).is_success
    [streaming] = slack.wait_for(
        lambda: [m for m in slack.bot_messages(OTTO_DM, thread_ts) if m.text],
        what="the first part of Otto's answer",
    )

    forged = events.agent_session_stopped(MIRA, OTTO_DM, thread_ts, [streaming.ts])
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
