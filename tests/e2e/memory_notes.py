"""What a person sees of the memory note under an answer, and their Undo click.

Shared by the end-to-end tests of the note (tests/e2e/test_memory_notes.py) and the attack
tests (tests/security/test_undo_clicks.py).
"""

from __future__ import annotations

from typing import Any

from app.slack.conversation.memory_note_blocks import NOTE_BLOCK_ID, UNDO_ACTION_ID
from tests.e2e.conversation import is_memory_note
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.claude_script import ScriptItem, text
from tests.fakes.slack_api import FakeSlack, Message
from tests.orion_server import OrionServer


def notes(slack: FakeSlack, channel: str, thread_ts: str) -> list[Message]:
    """Orion's memory notes in the thread, oldest first."""
    return [m for m in slack.bot_messages(channel, thread_ts) if is_memory_note(m)]


def wait_for_note(slack: FakeSlack, channel: str, thread_ts: str, count: int = 1) -> Message:
    """The newest note, once the thread has `count` of them."""
    found = slack.wait_for(
        lambda: (n := notes(slack, channel, thread_ts)) and len(n) >= count and n,
        timeout=30,
        what=f"{count} memory note(s)",
    )
    return found[-1]


def note_lines(message: Message) -> list[str]:
    """The note's lines, as the person reads them."""
    [block] = [b for b in message.blocks if b.get("block_id") == NOTE_BLOCK_ID]
    return block["text"]["text"].split("\n")


def undo_value(message: Message) -> str:
    """The Undo button's value (fails when the note has no Undo to click)."""
    [block] = [b for b in message.blocks if b.get("block_id") == NOTE_BLOCK_ID]
    accessory = block.get("accessory")
    assert accessory is not None, f"no Undo on {message.blocks!r}"
    assert accessory["action_id"] == UNDO_ACTION_ID
    value: str = accessory["value"]
    return value


def click_undo(
    orion: OrionServer, slack: FakeSlack, user: str, channel: str, note: Message
) -> None:
    """`user` clicks Undo on `note`, as Slack posts it (signed, form-encoded)."""
    payload = events.block_actions(
        user,
        channel,
        note.ts,
        UNDO_ACTION_ID,
        undo_value(note),
        thread_ts=note.thread_ts,
        block_id=NOTE_BLOCK_ID,
        message=note.to_api(),
    )
    assert orion.post_form(events.form_body(payload)).status_code == 200


def ephemerals(slack: FakeSlack, user: str) -> list[str]:
    """What only `user` was shown (chat.postEphemeral), oldest first."""
    return [c.args["text"] for c in slack.calls_to("chat.postEphemeral") if c.args["user"] == user]


def wait_for_ephemeral(slack: FakeSlack, user: str, count: int = 1) -> str:
    shown = slack.wait_for(
        lambda: (e := ephemerals(slack, user)) and len(e) >= count and e,
        timeout=30,
        what=f"{count} line(s) only {user} sees",
    )
    return shown[-1]


def answer_summaries(claude: FakeClaude, summary_model: str) -> None:
    """The summary model gets a summary whatever the script holds: the scripted replies
    are the answering model's alone."""

    def respond(body: dict[str, Any]) -> ScriptItem | None:
        if body["model"] == summary_model:
            return text("# Plans\nThe person's plans, noted.")
        return None

    claude.responder = respond
