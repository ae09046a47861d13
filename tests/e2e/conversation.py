"""What a person does in their DM with Orion, what they see there, and what Claude is sent.

Shared by the end-to-end tests; each test module names its own person and DM channel.
"""

from __future__ import annotations

import re
from typing import Any

from app.slack.conversation.memory_note_blocks import NOTE_BLOCK_ID
from tests.fakes import slack_events as events
from tests.fakes._waiting import PATIENCE_S
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import Call, FakeSlack, Message
from tests.orion_server import OrionServer

# About 3,000 characters: Claude (the fake) sends it in several deltas, and Orion streams it
# in several Slack calls when Claude writes it slowly enough.
LONG_ANSWER = " ".join(f"word{n}" for n in range(400))

# The first event of a test may still be building the services (the anthropic and
# google-cloud-storage imports take several seconds on a small machine).
FIRST_EVENT_TIMEOUT = PATIENCE_S


# --- what a person does, and what they see --------------------------------------------------


def open_thread(
    orion: OrionServer,
    slack: FakeSlack,
    user: str,
    channel: str,
    timeout: float = FIRST_EVENT_TIMEOUT,
) -> tuple[str, str]:
    """Open an assistant thread; returns its ts and Orion's greeting."""
    thread_ts = slack.open_assistant_thread(channel)
    response = orion.post_event(events.assistant_thread_started(user, channel, thread_ts))
    assert response.status_code == 200
    [greeting] = slack.wait_for(
        lambda: slack.bot_messages(channel, thread_ts), timeout=timeout, what="the greeting"
    )
    return thread_ts, greeting.text


def post_user_message(
    orion: OrionServer, slack: FakeSlack, user: str, channel: str, thread_ts: str, text: str
) -> dict[str, Any]:
    """The person writes in the thread; returns the event as delivered (to deliver again)."""
    ts = slack.add_user_message(channel, thread_ts, user, text)
    payload = events.user_message_in_thread(user, channel, thread_ts, text, ts=ts)
    assert orion.post_event(payload).status_code == 200
    return payload


def finished(slack: FakeSlack, channel: str, thread_ts: str) -> list[str]:
    """Orion's finished messages in the thread, oldest first (a greeting included), but
    the memory notes that follow answers which saved something (tests/e2e/memory_notes.py
    reads those)."""
    return [m.text for m in _said(slack, channel, thread_ts) if not m.streaming]


def answers(slack: FakeSlack, channel: str, thread_ts: str) -> list[str]:
    """Orion's finished messages after its greeting (memory notes aside)."""
    return [m.text for m in _said(slack, channel, thread_ts)[1:] if not m.streaming]


def _said(slack: FakeSlack, channel: str, thread_ts: str) -> list[Message]:
    return [m for m in slack.bot_messages(channel, thread_ts) if not is_memory_note(m)]


def is_memory_note(message: Message) -> bool:
    return any(block.get("block_id") == NOTE_BLOCK_ID for block in message.blocks)


def wait_for_messages(
    slack: FakeSlack,
    channel: str,
    thread_ts: str,
    count: int,
    *,
    after_greeting: bool,
    timeout: float = FIRST_EVENT_TIMEOUT,
) -> list[str]:
    """Wait until Orion has finished `count` messages in the thread (not counting its
    greeting, with `after_greeting`); returns them all."""
    read = answers if after_greeting else finished

    def enough() -> list[str] | None:
        texts = read(slack, channel, thread_ts)
        return texts if len(texts) >= count else None

    return slack.wait_for(enough, timeout=timeout, what=f"{count} finished message(s)")


def wait_for_answer(
    slack: FakeSlack,
    channel: str,
    thread_ts: str,
    answer: str,
    timeout: float = FIRST_EVENT_TIMEOUT,
) -> None:
    """Wait until `answer` is one of Orion's finished messages in the thread."""
    slack.wait_for(
        lambda: answer in finished(slack, channel, thread_ts),
        timeout=timeout,
        what=f"the answer {answer!r}",
    )


def shown_text(call: Call) -> str:
    """The answer's text a stream call carries: `markdown_text`, or markdown chunks (beside
    task updates, text travels as chunks)."""
    chunks = call.args.get("chunks") or []
    text = "".join(c.get("text") or "" for c in chunks if c.get("type") == "markdown_text")
    return (call.args.get("markdown_text") or "") + text


def opening_words(slack: FakeSlack, channel: str | None = None) -> list[str]:
    """For each streamed answer (in `channel`), one after the other, the text of its first
    stream call that carries any: a memory task may open the stream before the words."""
    words: list[str] = []
    waiting = False
    for call in slack.calls:
        if call.error or (channel is not None and call.args.get("channel") != channel):
            continue
        if call.method == "chat.startStream":
            waiting = True
        if waiting and call.method in _STREAM_CALLS and (text := shown_text(call)):
            words.append(text)
            waiting = False
    return words


_STREAM_CALLS = ("chat.startStream", "chat.appendStream", "chat.stopStream")


# --- what Claude is sent --------------------------------------------------------------------


def main_requests(claude: FakeClaude, orion: OrionServer) -> list[dict[str, Any]]:
    """The requests for the answering model (not the summary model), in order."""
    return [r for r in claude.requests if r["model"] == orion.settings.anthropic_model]


def system_text(request: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in request["system"])


def remembered(request: dict[str, Any]) -> str:
    """The memory block of the system prompt Claude was sent (fails when there is none)."""
    blocks = [b["text"] for b in request["system"] if "<remembered_context>" in b["text"]]
    assert len(blocks) == 1, f"expected one memory block in {request['system']!r}"
    match = _REMEMBERED.search(blocks[0])
    assert match is not None
    return match.group(1)


_REMEMBERED = re.compile(r"<remembered_context>\n(.*)\n</remembered_context>", re.DOTALL)


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of the request's last message (Orion's answer to tool calls)."""
    last = request["messages"][-1]
    if last["role"] != "user" or not isinstance(last["content"], list):
        return []
    return [block for block in last["content"] if block.get("type") == "tool_result"]


def result_text(result: dict[str, Any]) -> str:
    """A tool result as text: its text blocks, and each search result as a numbered line
    (`1. title [source]`) followed by its passages."""
    content = result["content"]
    if isinstance(content, str):
        return content
    parts, number = [], 0
    for block in content:
        if block.get("type") == "search_result":
            number += 1
            passages = " ".join(c.get("text", "") for c in block.get("content", []))
            parts.append(f"\n{number}. {block['title']} [{block['source']}]\n{passages}")
        else:
            parts.append(block.get("text", ""))
    return "\n".join(parts)
