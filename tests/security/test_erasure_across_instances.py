"""A Forget clicked on one instance while another is still answering brings nothing back.

Cloud Run instances share nothing but the bucket: a click lands on any of them. Played
with two Orion servers on one GCS emulator: instance A answers Mira in a conversation
(Claude held mid-answer) while she clicks Forget — on that conversation, or on everything —
from her Home tab, served by instance B. A's turn end then finds the mark in her profile
and takes back what it wrote; the bucket keeps nothing of it, and Otto's memory is his.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from app.learning.search_index import parse_search_index
from app.memory.homes import person
from app.slack.home.memory_view import ACTION_FORGET_CONVERSATION, ACTION_FORGET_EVERYTHING
from tests import layout, log_events
from tests.e2e import conversation
from tests.e2e.home import click, open_home
from tests.e2e.memory_bucket import Bucket
from tests.e2e.test_memory_controls import (
    DM,
    SUMMARY,
    THREAD,
    USER,
    everything_in,
    left_of,
    mira,
    otto,
    seed,
)
from tests.fakes import claude_script as script
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

TOPIC = "quokka"  # only in what the turn says and learns
QUESTION = f"Where did we land on the {TOPIC} mascot for the billing launch, and who draws it?"
ANSWER = f"The {TOPIC} mascot is settled: Dana draws it, and the print shop wants it by Friday."
LEARNED = f"# The {TOPIC} mascot\nDana draws the {TOPIC} mascot for the billing launch."


def _note(directory: str) -> dict[str, str]:
    path = f"/memories/{directory}/{TOPIC}.md"
    return {"command": "create", "path": path, "file_text": f"Dana draws the {TOPIC}."}


def _two_instances(
    orion_on_bucket: Callable[..., OrionServer], bucket: Bucket, claude: FakeClaude
) -> tuple[OrionServer, OrionServer]:
    seed(bucket, mira())
    seed(bucket, otto())
    # Both log into the process's one stream, which is the last started server's.
    clicked = orion_on_bucket()
    answering = orion_on_bucket()
    summary_model = answering.settings.summary_model

    def respond(body: dict[str, Any]) -> script.ScriptItem | None:
        return script.text(LEARNED) if body["model"] == summary_model else None

    claude.responder = respond
    return answering, clicked


def _answer_while(
    answering: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    forget: Callable[[], object],
    note: dict[str, str],
) -> None:
    """Mira asks in her old conversation on `answering`; Claude's first response waits
    until `forget` (her click on the other instance) is done, then saves `note` (after the
    erasure's deletions) and answers."""
    forgotten = threading.Event()
    claude.reply_tool_use("memory", note, waits_for=forgotten)
    claude.reply(ANSWER)
    turn_ends = len(answering.logged(log_events.MEMORY_AFTER_TURN))
    calls = len(claude.calls)
    conversation.post_user_message(answering, slack, USER, DM, THREAD, QUESTION)
    claude.wait_for(lambda: len(claude.calls) > calls, what="the turn's first Claude call")
    forget()
    forgotten.set()
    conversation.wait_for_answer(slack, DM, THREAD, ANSWER, timeout=30)
    slack.wait_for(
        lambda: len(answering.logged(log_events.MEMORY_AFTER_TURN)) > turn_ends,
        timeout=30,
        what="the turn's end",
    )
    answering.wait_idle()


def test_forgetting_a_conversation_on_one_instance_while_another_answers_in_it(
    orion_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
) -> None:
    answering, clicked = _two_instances(orion_on_bucket, bucket, claude)
    otto_before = {key: bucket.read(key) for key in otto()}
    view = open_home(clicked, slack, USER, DM)

    _answer_while(
        answering,
        slack,
        claude,
        lambda: click(clicked, slack, USER, view, ACTION_FORGET_CONVERSATION, THREAD),
        _note(f"sessions/{THREAD}"),
    )

    assert answering.logged(log_events.MEMORY_ERASED_DURING_EVENT), "A took its writes back"
    home = person(USER)
    everything = everything_in(bucket)
    assert home.conversation_key(THREAD) not in everything
    assert [k for k, text in everything.items() if TOPIC in text or SUMMARY in text] == []
    assert THREAD not in parse_search_index(everything.get(home.search_key)).threads
    assert layout.profile_of(everything.get(home.profile_key)).entry(THREAD) is None
    assert "language" in (everything.get(layout.preferences_key(USER)) or ""), "the rest stays"
    assert {key: bucket.read(key) for key in otto()} == otto_before


def test_forget_everything_on_one_instance_while_another_answers(
    orion_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
) -> None:
    answering, clicked = _two_instances(orion_on_bucket, bucket, claude)
    otto_before = {key: bucket.read(key) for key in otto()}
    view = open_home(clicked, slack, USER, DM)

    def forget_everything() -> None:
        before = len(answering.logged(log_events.MEMORY_FORGET))
        click(clicked, slack, USER, view, ACTION_FORGET_EVERYTHING)
        slack.wait_for(
            lambda: len(answering.logged(log_events.MEMORY_FORGET)) > before, what="the erasure"
        )

    _answer_while(answering, slack, claude, forget_everything, _note(f"users/{USER}"))

    assert answering.logged(log_events.MEMORY_ERASED_DURING_EVENT), "A took its writes back"
    assert left_of(bucket, USER) == {}
    assert [k for k, text in everything_in(bucket).items() if TOPIC in text] == []
    assert {key: bucket.read(key) for key in otto()} == otto_before
