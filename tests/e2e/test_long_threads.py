"""Long threads: Claude sees the thread's opening request and its newest messages, the cut
between them is marked, and a later turn reads only the newest window again.

End to end through signed events against the fake Slack, which pages `conversations.replies`
as Slack does (oldest first, `limit` and `cursor`, `oldest` windows).
"""

from __future__ import annotations

from typing import Any

from app.agent.history import CUT_NOTE
from tests.e2e.conversation import main_requests, post_user_message, wait_for_answer
from tests.fakes import claude_script as script
from tests.fakes.anthropic_api import FakeClaude, last_user_text, message_text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_model import BOT_ID, Message
from tests.orion_server import OrionServer

USER, CHANNEL = "U0JUNO", "D0JUNO"
OPENING = "Help me plan the data-centre migration: 40 services, two weeks, no downtime."


def long_thread(slack: FakeSlack, earlier: int) -> str:
    """An assistant thread: Slack's root, Orion's greeting, the person's opening request,
    then `earlier` - 1 more messages, alternating person and Orion, numbered."""
    thread_ts = slack.open_assistant_thread(CHANNEL)
    add_bot_message(slack, thread_ts, "Hi, I'm Orion. How can I help?")
    slack.add_user_message(CHANNEL, thread_ts, USER, OPENING)
    for n in range(2, earlier + 1):
        if n % 2:
            add_bot_message(slack, thread_ts, f"Noted, step {n}.")
        else:
            slack.add_user_message(CHANNEL, thread_ts, USER, f"Step {n}: move service {n}.")
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
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = long_thread(slack, 450)

    request = ask(orion, slack, claude, thread_ts, "What did I just say?")

    sent = contents(request)
    assert sent[0].startswith(OPENING) and sent[0].endswith(CUT_NOTE), "opening, then the cut"
    assert "Step 450: move service 450." in sent[-1], "the newest earlier message is there"
    assert "Noted, step 449." in "\n".join(sent), "the newest earlier messages are there"
    assert not any("Step 200:" in text for text in sent), "the middle is cut"
    assert sent[-1].endswith("What did I just say?")
    assert len(sent) <= 30


def test_a_1000_message_thread_pages_once_then_reads_only_its_newest_window(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = long_thread(slack, 1000)

    before = replies_calls(slack)
    ask(orion, slack, claude, thread_ts, "First question?")
    first_turn = replies_calls(slack) - before
    before = replies_calls(slack)
    second = ask(orion, slack, claude, thread_ts, "Second question?")
    second_turn = replies_calls(slack) - before

    assert first_turn == 6, "1,000 messages in pages of 200 (and the two new ones)"
    assert second_turn <= 2, "the newest window (and the thread's start) only"
    sent = contents(second)
    assert sent[0].startswith(OPENING) and CUT_NOTE in sent[0]
    joined = "\n".join(sent)
    assert "First question?" in joined and "Answer to: First question?" in joined
    assert sent[-1].endswith("Second question?")
    window_calls = [c for c in slack.calls_to("conversations.replies")[-second_turn:]]
    assert any(c.args.get("oldest") for c in window_calls), "asked from the window's start"


def test_edits_and_deletions_in_the_window_reach_the_next_turn(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = long_thread(slack, 300)
    ask(orion, slack, claude, thread_ts, "Where are we?")
    messages = slack.thread(CHANNEL, thread_ts)
    edited = next(m for m in reversed(messages) if m.text.startswith("Step 298"))
    deleted = next(m for m in reversed(messages) if m.text.startswith("Step 296"))
    with slack.workspace.lock:
        original = slack.workspace.get(CHANNEL, edited.ts)
        assert original is not None
        original.text, original.edited = "Step 298: keep service 298 where it is.", True
        gone = slack.workspace.get(CHANNEL, deleted.ts)
        assert gone is not None
        gone.deleted = True

    request = ask(orion, slack, claude, thread_ts, "And now?")

    joined = "\n".join(contents(request))
    assert "keep service 298 where it is" in joined and "move service 298" not in joined
    assert "Step 296" not in joined
