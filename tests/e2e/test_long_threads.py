"""Long threads: Claude sees the thread's opening request and its newest messages, the cut
between them is marked; every turn's history is Orion's own transcript, never a read of
the DM's history from Slack — also under Slack's non-Marketplace limits.

End to end through signed events against the fake Slack, which pages `conversations.replies`
as Slack does (oldest first, `limit` and `cursor`), and limits it when asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.agent.history import CUT_NOTE
from tests import layout, log_events
from tests.e2e.conversation import main_requests, post_user_message, wait_for_answer
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, last_user_text, message_text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_model import BOT_ID, Message
from tests.orion_server import OrionServer

USER, CHANNEL = "U0JUNO", "D0JUNO"
OPENING = "Help me plan the data-centre migration: 40 services, two weeks, no downtime."


def long_thread(slack: FakeSlack, memory_dir: Path, earlier: int) -> str:
    """An assistant thread: Slack's root, Orion's greeting, the person's opening request,
    then `earlier` - 1 more messages, alternating person and Orion, numbered; and Orion's
    transcript of it, as its turns kept it (bounded: the opening and the newest)."""
    thread_ts = slack.open_assistant_thread(CHANNEL)
    add_bot_message(slack, thread_ts, "Hi, I'm Orion. How can I help?")
    slack.add_user_message(CHANNEL, thread_ts, USER, OPENING)
    said = [("user", OPENING)]
    for n in range(2, earlier + 1):
        if n % 2:
            add_bot_message(slack, thread_ts, f"Noted, step {n}.")
            said.append(("assistant", f"Noted, step {n}."))
        else:
            slack.add_user_message(CHANNEL, thread_ts, USER, f"Step {n}: move service {n}.")
            said.append(("user", f"Step {n}: move service {n}."))
    kept = memory_dir / layout.conversation_key(USER, thread_ts)
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(layout.conversation(USER, thread_ts, channel_id=CHANNEL, messages=said))
    return thread_ts


def add_bot_message(slack: FakeSlack, thread_ts: str, text: str) -> None:
    ts = slack.workspace.new_ts()
    slack.workspace.add(
        Message(ts=ts, channel=CHANNEL, thread_ts=thread_ts, text=text, bot_id=BOT_ID)
    )


def ask(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, thread_ts: str, text: str
) -> dict[str, Any]:
    def respond(body: dict[str, Any]) -> script.ScriptItem | None:
        # The turn-end summary (another model) gets the fake's default reply.
        if body["model"] != orion.settings.anthropic_model:
            return None
        # Consecutive messages of the person are merged into one: the question comes last.
        question = last_user_text(body).rsplit("\n\n", 1)[-1]
        return script.text(f"Answer to: {question}")

    claude.responder = respond
    post_user_message(orion, slack, USER, CHANNEL, thread_ts, text)
    wait_for_answer(slack, CHANNEL, thread_ts, f"Answer to: {text}")
    return main_requests(claude, orion)[-1]


def replies_calls(slack: FakeSlack) -> int:
    return len(slack.calls_to("conversations.replies"))


def contents(request: dict[str, Any]) -> list[str]:
    return [message_text(m) for m in request["messages"]]


def test_a_450_message_thread_sends_its_opening_and_newest_messages_with_the_cut_marked(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    thread_ts = long_thread(slack, memory_dir, 450)

    request = ask(orion, slack, claude, thread_ts, "What did I just say?")

    sent = contents(request)
    assert sent[0].startswith(OPENING) and sent[0].endswith(CUT_NOTE), "opening, then the cut"
    assert "Step 450: move service 450." in sent[-1], "the newest earlier message is there"
    assert "Noted, step 449." in "\n".join(sent), "the newest earlier messages are there"
    assert not any("Step 200:" in text for text in sent), "the middle is cut"
    assert sent[-1].endswith("What did I just say?")
    assert len(sent) <= 30
    assert replies_calls(slack) == 0, "Orion's transcript, not Slack's history"


def test_a_1000_message_thread_goes_on_from_orions_transcript_turn_after_turn(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    thread_ts = long_thread(slack, memory_dir, 1000)

    ask(orion, slack, claude, thread_ts, "First question?")
    orion.wait_idle()
    second = ask(orion, slack, claude, thread_ts, "Second question?")

    assert replies_calls(slack) == 0, "Orion's transcript, not Slack's history"
    sent = contents(second)
    assert sent[0].startswith(OPENING) and CUT_NOTE in sent[0]
    joined = "\n".join(sent)
    assert "Step 1000: move service 1000." in joined, "the newest earlier messages"
    assert "First question?" in joined and "Answer to: First question?" in joined
    assert sent[-1].endswith("Second question?")


def test_under_non_marketplace_limits_every_turn_still_has_its_history(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    # A commercially distributed install outside the Marketplace: one conversations.replies
    # a minute, 15 messages a call. A new conversation never needs it.
    slack.limit_history_reads()
    thread_ts = slack.open_assistant_thread(CHANNEL)
    add_bot_message(slack, thread_ts, "Hi, I'm Orion. How can I help?")
    orion.post_event(events.assistant_thread_started(USER, CHANNEL, thread_ts))
    orion.wait_idle()

    for n in range(1, 5):
        ask(orion, slack, claude, thread_ts, f"Question {n}: which service moves first?")
    last = contents(main_requests(claude, orion)[-1])

    assert replies_calls(slack) == 0
    joined = "\n".join(last)
    for n in range(1, 4):
        assert f"Question {n}:" in joined and f"Answer to: Question {n}:" in joined
    assert not orion.logged(log_events.SLACK_THREAD_HISTORY_LIMITED)
