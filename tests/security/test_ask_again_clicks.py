"""The Ask again button under a cut-off answer asks only its own person's question, once.

Played end to end (the real Orion HTTP app, the fake Slack and Claude, memories in the GCS
emulator): someone else clicks it, a click names another person's question or thread, a
button value that is not a message's ts, and the asker clicking twice. Whose a question is
comes from Orion's record of the conversation, never from the click.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.slack.conversation.ask_again import NOT_FOUND, NOT_YOURS
from app.slack.conversation.reply_stream import ASK_AGAIN_ACTION_ID
from tests import log_events
from tests.e2e import conversation
from tests.e2e.memory_notes import wait_for_ephemeral
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

OWNER, OWNER_DM = "U0OWNERA", "D0OWNERA"
MALLORY, MALLORY_DM = "U0MALLORY", "D0MALLORY"
QUESTION = "What did we decide about the Q3 budget?"


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer]) -> OrionServer:
    return orion_on_bucket()


def _asked(orion: OrionServer, slack: FakeSlack, claude: FakeClaude) -> tuple[str, str]:
    """The owner asked in their own thread and was answered; (thread, question ts)."""
    thread_ts, _ = conversation.open_thread(orion, slack, OWNER, OWNER_DM)
    claude.reply("We kept it flat.")
    payload = conversation.post_user_message(orion, slack, OWNER, OWNER_DM, thread_ts, QUESTION)
    conversation.wait_for_answer(slack, OWNER_DM, thread_ts, "We kept it flat.")
    orion.wait_idle()
    return thread_ts, payload["event"]["ts"]


def _click(orion: OrionServer, user: str, channel: str, thread_ts: str, value: str) -> None:
    click = events.block_actions(
        user, channel, thread_ts, ASK_AGAIN_ACTION_ID, value, thread_ts=thread_ts
    )
    assert orion.post_form(events.form_body(click)).status_code == 200
    orion.wait_logged(log_events.SLACK_ASK_AGAIN_DONE)
    orion.wait_idle()


def test_someone_else_clicking_asks_nothing_and_leaves_the_question_to_its_owner(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts, question_ts = _asked(orion, slack, claude)
    asked = len(claude.requests)

    _click(orion, MALLORY, OWNER_DM, thread_ts, question_ts)

    assert wait_for_ephemeral(slack, MALLORY) == NOT_YOURS
    assert len(claude.requests) == asked, "Claude was not asked"
    # The owner can still ask it again: Mallory's click claimed nothing.
    claude.reply("Still flat.")
    _click(orion, OWNER, OWNER_DM, thread_ts, question_ts)
    conversation.wait_for_answer(slack, OWNER_DM, thread_ts, "Still flat.")


def test_a_click_naming_another_persons_thread_from_ones_own_dm_reaches_nothing_of_it(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts, question_ts = _asked(orion, slack, claude)
    asked = len(claude.requests)

    # Mallory's own DM, the owner's thread and question named: her click looks for the
    # question in her own home, and in her DM's thread in Slack, and finds it in neither.
    _click(orion, MALLORY, MALLORY_DM, thread_ts, question_ts)

    assert wait_for_ephemeral(slack, MALLORY) == NOT_FOUND
    assert len(claude.requests) == asked
    assert not [m for m in slack.bot_messages(MALLORY_DM, thread_ts) if m.text]


@pytest.mark.parametrize(
    "value", ["", "not-a-ts", "1712345678", "../../users/U0OWNERA", "1712345678.1" * 50]
)
def test_a_button_value_that_is_not_a_messages_ts_is_ignored(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, value: str
) -> None:
    thread_ts = slack.new_ts()
    calls = len(slack.calls)

    _click(orion, OWNER, OWNER_DM, thread_ts, value)

    assert orion.logged(log_events.SLACK_ASK_AGAIN_MALFORMED)
    # (Bolt's own authorization may ask auth.test once: that is not the click's doing.)
    asked = [call.method for call in slack.calls[calls:] if call.method != "auth.test"]
    assert asked == [], "nothing was asked of Slack"
    assert claude.requests == []


def test_the_asker_clicking_twice_is_answered_once(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts, question_ts = _asked(orion, slack, claude)
    claude.reply("Flat, as before.")

    _click(orion, OWNER, OWNER_DM, thread_ts, question_ts)
    _click(orion, OWNER, OWNER_DM, thread_ts, question_ts)

    answers = conversation.finished(slack, OWNER_DM, thread_ts)
    assert answers.count("Flat, as before.") == 1
    assert orion.logged(log_events.SLACK_ASK_AGAIN_ALREADY_ASKED)
