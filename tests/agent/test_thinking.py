"""Thinking in the tool loop, against FakeClaude answering as Sonnet 5.5: the settings each
call asks for, thinking blocks passed back as they came, and their text never traced,
logged, summarised or, as reasoning, shown."""

from __future__ import annotations

import json
from pathlib import Path

from anthropic import AsyncAnthropic
from structlog.testing import capture_logs

from app.agent.loop import LoopResult, run_agent_loop
from app.agent.thinking import Thinking
from app.agent.toolbox import tools_for_turn
from app.memory.scopes import MemoryScope
from app.storage.local_directory import LocalDirectoryStore
from tests.agent.conftest import MODEL, RecordingSink
from tests.backends import THREAD, USER
from tests.fakes.anthropic_api import FakeClaude
from tests.span_log import SpanLog

QUESTION = [{"role": "user", "content": "What do you remember about me?"}]
VIEW = {"command": "view", "path": "/memories"}
NOTE = "Checking what I noted about you, Kestrel-7."


async def loop(
    client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path, thinking: Thinking | None = None
) -> LoopResult:
    store = LocalDirectoryStore(tmp_path / "memories")
    return await run_agent_loop(
        client,
        model=MODEL,
        system=[{"type": "text", "text": "You are Orion."}],
        messages=QUESTION,
        tools=tools_for_turn(store=store, scope=MemoryScope(USER, THREAD)),
        sink=sink,
        **({"thinking": thinking} if thinking else {}),
    )


async def test_no_call_forces_a_tool_and_every_call_asks_for_the_turns_thinking(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    claude.reply_tool_use("memory", VIEW, text=NOTE)
    claude.reply_tool_use("memory", VIEW)
    claude.reply("Nothing yet.")

    await loop(claude_client, sink, tmp_path)

    assert len(claude.requests) == 3
    for request in claude.requests:
        assert "tool_choice" not in request  # forced tool use is a 400 on Sonnet 5.5
        assert request["thinking"] == {"type": "between_tools"}
        assert request["output_config"] == {"effort": "medium"}


async def test_thinking_blocks_go_back_unchanged_in_every_later_call(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    claude.reply_tool_use("memory", VIEW, text=NOTE)
    claude.reply_tool_use("memory", VIEW, text="One more look.")
    claude.reply("Nothing yet.")

    result = await loop(claude_client, sink, tmp_path)

    # FakeClaude refuses (400) a call whose thinking blocks were dropped or altered: the
    # turn ended, and the third call carries both earlier turns' notes as they came.
    assert result.text == "Nothing yet."
    third = claude.requests[2]["messages"]
    notes = [b["thinking"] for m in third[1::2] for b in m["content"] if b["type"] == "thinking"]
    assert notes == [NOTE, "One more look."]
    assert sink.text == f"{NOTE}\n\nOne more look.\n\nNothing yet."


async def test_thinking_text_is_never_traced_logged_or_kept_in_the_answer(
    claude: FakeClaude,
    claude_client: AsyncAnthropic,
    sink: RecordingSink,
    tmp_path: Path,
    spans: SpanLog,
) -> None:
    claude.reply_tool_use("memory", VIEW, text=NOTE)
    claude.reply("Nothing yet.")

    with capture_logs() as logs:
        result = await loop(claude_client, sink, tmp_path)

    [first, second] = spans.named("agent.claude")
    traced = json.dumps([spans.attributes(first), spans.attributes(second)], default=str)
    signature = claude.requests[1]["messages"][1]["content"][0]["signature"]
    assert "Kestrel-7" not in traced and signature not in traced
    assert f'"chars": {len(NOTE)}' in traced  # only its length
    assert "Kestrel-7" not in json.dumps(logs, default=str)
    # Shown as the note it is; not part of the answer that is summarised and remembered.
    assert NOTE in sink.text and "Kestrel-7" not in result.text
    # Each call's usage is logged, with what the cache read and wrote.
    calls = [line for line in logs if line["event"] == "agent.claude.call"]
    assert len(calls) == 2
    assert all({"cache_read_input_tokens", "cache_creation_input_tokens"} <= set(c) for c in calls)


async def test_with_adaptive_thinking_the_reasoning_is_asked_for_omitted_and_never_shown(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    claude.reply_tool_use("memory", VIEW, text=NOTE)
    claude.reply("Nothing yet.")

    result = await loop(claude_client, sink, tmp_path, Thinking("adaptive", "high"))

    first, second = claude.requests
    assert first["thinking"] == {"type": "adaptive", "display": "omitted"}
    # The up-front thinking and the note came back (empty, signed) and went back as they came.
    passed_back = [b for b in second["messages"][1]["content"] if b["type"] == "thinking"]
    assert passed_back and all(b["thinking"] == "" and b["signature"] for b in passed_back)
    assert sink.text == result.text == "Nothing yet."
