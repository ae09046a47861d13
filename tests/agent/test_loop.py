"""The agent loop against FakeClaude: tools Claude asks for are run and their results sent
back until it answers, and a Claude that never stops calling tools is cut off with a note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from anthropic import AsyncAnthropic
from anthropic.lib.tools._beta_functions import BetaAsyncBuiltinFunctionTool
from anthropic.types.beta import BetaToolParam
from structlog.testing import capture_logs

from app.agent.loop import MAX_ITERATIONS, run_agent_loop
from app.agent.prompt_cache import EPHEMERAL
from app.agent.stop_reasons import CUT_SHORT, TOO_MANY_STEPS
from app.agent.tool_registry import ToolRegistry
from app.agent.toolbox import tools_for_turn
from app.memory.homes import person
from app.memory.scopes import MemoryScope
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.storage.local_directory import LocalDirectoryStore
from tests.agent.conftest import MODEL, RecordingSink
from tests.backends import THREAD, USER, Backend
from tests.fakes import claude_script as script
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.claude_thinking import strip_cache_control

SCOPE = MemoryScope(USER, THREAD)
SYSTEM = [{"type": "text", "text": "You are Orion."}]
QUESTION = {"role": "user", "content": "I prefer tea to coffee, remember that."}
NOTES_PATH = f"/memories/users/{USER}/notes.md"
VIEW_ROOT = {"command": "view", "path": "/memories"}


def local_tools(tmp_path: Path) -> ToolRegistry:
    return tools_for_turn(store=LocalDirectoryStore(tmp_path / "memories"), scope=SCOPE)


async def run(
    client: AsyncAnthropic, tools: ToolRegistry, sink: RecordingSink, **kwargs: Any
) -> Any:
    return await run_agent_loop(
        client,
        model=MODEL,
        system=SYSTEM,
        messages=[QUESTION],
        tools=tools,
        sink=sink,
        **kwargs,
    )


class CrashingCalendar(BetaAsyncBuiltinFunctionTool):
    """A tool whose backend fails with details that must reach neither Claude nor the user."""

    def to_dict(self) -> BetaToolParam:
        schema = {"type": "object", "properties": {"day": {"type": "string"}}}
        return {"name": "calendar", "description": "Look up a day.", "input_schema": schema}

    async def call(self, input: object) -> str:
        raise RuntimeError("calendar db 10.0.0.7 refused login with password=hunter2")


async def test_a_tool_call_is_run_and_its_result_sent_back_before_claude_answers(
    claude: FakeClaude,
    claude_client: AsyncAnthropic,
    sink: RecordingSink,
    backend: Backend,
) -> None:
    create = {"command": "create", "path": NOTES_PATH, "file_text": "Prefers tea.\n"}
    tool_id = claude.reply_tool_use("memory", create, text="Let me note that.")
    claude.reply("Noted: tea it is.")

    with capture_logs() as logs:
        result = await run(claude_client, tools_for_turn(store=backend.store, scope=SCOPE), sink)

    # The person sees both steps' text, kept apart, and what Orion was doing in between:
    # the progress note (a thinking block under `between_tools`) is shown as it comes, but
    # it is not the answer that is summarised and remembered.
    assert sink.text == "Let me note that.\n\nNoted: tea it is."
    assert result.text == "Noted: tea it is."
    assert sink.progress == ["is checking its memory..."]
    assert (result.iterations, result.stop_reason) == (2, "end_turn")
    # The tool really ran against the store.
    # In the person's home, where /memories/users/{USER}/ lives.
    assert backend.raw_read(f"{person(USER).memory_prefix}notes.md") == "Prefers tea.\n"
    # Claude is sent the question, its own turn as it came (the progress note's thinking
    # block unchanged, signature and all), then the result for that very call; the last
    # message of each call is the cache breakpoint.
    first, second = claude.requests
    assert first["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": QUESTION["content"], "cache_control": EPHEMERAL}],
        }
    ]
    note, call = second["messages"][1]["content"]
    assert (note["type"], note["thinking"], bool(note["signature"])) == (
        "thinking",
        "Let me note that.",
        True,
    )
    assert second["messages"] == [
        QUESTION,
        {"role": "assistant", "content": [note, call]},
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": tool_id,
                    "content": f"File created successfully at: {NOTES_PATH}",
                    "cache_control": EPHEMERAL,
                }
            ],
        },
    ]
    assert call == {"type": "tool_use", "id": tool_id, "name": "memory", "input": create}
    for request in (first, second):
        assert (request["model"], request["system"], request["stream"]) == (MODEL, SYSTEM, True)
        assert (request["thinking"], request["output_config"]) == (
            {"type": "between_tools"},
            {"effort": "medium"},
        )
        assert [tool["name"] for tool in request["tools"]] == [
            "memory",
            "recall",
            "memory_overview",
            "forget",
        ]
    # Each call's logged usage (FakeClaude's counts depend only on what it was sent): every
    # prompt token was read fresh, read from the cache or written to it.
    sent = sum(script.prompt_blocks_total(body) for body in claude.requests)
    calls = [line for line in logs if line["event"] == "agent.claude.call"]
    assert len(calls) == 2
    assert sent == sum(
        call[f"{kind}_tokens"]
        for call in calls
        for kind in ("input", "cache_read_input", "cache_creation_input")
    )


async def test_several_tool_calls_in_one_step_get_their_results_in_order_in_one_message(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    query = {"query": "tea"}
    recall = {"type": "tool_use", "id": "toolu_recall_1", "name": "recall", "input": query}
    view = {"type": "tool_use", "id": "toolu_view_2", "name": "memory", "input": VIEW_ROOT}
    claude.reply_blocks([recall, view])
    claude.reply("Nothing about tea yet.")

    result = await run(claude_client, local_tools(tmp_path), sink)

    assert result.text == "Nothing about tea yet."
    _, second = claude.requests
    assert second["messages"][1] == {"role": "assistant", "content": [recall, view]}
    [results] = second["messages"][2:]
    assert results["role"] == "user"
    assert [(r["type"], r["tool_use_id"]) for r in results["content"]] == [
        ("tool_result", "toolu_recall_1"),
        ("tool_result", "toolu_view_2"),
    ]
    assert not any(r.get("is_error") for r in results["content"])
    assert "no earlier conversations" in results["content"][0]["content"]
    assert results["content"][1]["content"].endswith("\t/memories")
    # The status names what the step starts with.
    assert sink.progress == ["is looking through past conversations..."]


async def test_failing_tools_become_error_results_and_the_turn_still_gets_its_answer(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    missing = {"command": "view", "path": f"/memories/users/{USER}/missing.md"}
    claude.reply_blocks(
        [
            {"type": "tool_use", "id": "toolu_a", "name": "weather", "input": {"city": "Lisbon"}},
            {"type": "tool_use", "id": "toolu_b", "name": "memory", "input": missing},
            {"type": "tool_use", "id": "toolu_c", "name": "calendar", "input": {"day": "Mon"}},
        ]
    )
    claude.reply("I couldn't check those, sorry.")
    store = LocalDirectoryStore(tmp_path / "memories")
    tools = ToolRegistry([ScopedMemoryTool(store, SCOPE), CrashingCalendar()])

    result = await run(claude_client, tools, sink)

    assert result.text == sink.text == "I couldn't check those, sorry."
    _, second = claude.requests
    assert second["messages"][-1]["content"][-1]["cache_control"] == EPHEMERAL
    assert strip_cache_control(second["messages"][-1]) == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_a",
                "content": "Unknown tool: weather",
                "is_error": True,
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_b",
                "content": f"The path {missing['path']} does not exist. "
                "Please provide a valid path.",
                "is_error": True,
            },
            {
                "type": "tool_result",
                "tool_use_id": "toolu_c",
                "content": "The calendar tool failed unexpectedly. Try again later.",
                "is_error": True,
            },
        ],
    }
    assert "hunter2" not in json.dumps(claude.requests)
    # Each call shows as a task that finishes: a missing file is only that; a crash on
    # Orion's side is an error, and what the person sees names no detail of it.
    finished = {task.id: task for task in sink.tasks if task.status != "in_progress"}
    assert [(t.title, t.status, t.output) for t in finished.values()] == [
        ("Working on it", "error", "Not done"),
        ("Reading missing.md", "complete", "Nothing there yet"),
        ("Working on it", "error", "Couldn't reach my memory, so nothing was read"),
    ]
    assert "hunter2" not in repr(sink.tasks)


async def test_claude_that_keeps_calling_tools_is_stopped_with_a_note_after_the_step_limit(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    def always_another_tool(body: dict[str, Any]) -> script.ScriptItem:
        step = (len(body["messages"]) + 1) // 2  # the question, then a call and result a step
        return script.tool_use("memory", VIEW_ROOT, text=f"Step {step}.")

    claude.responder = always_another_tool

    result = await run(claude_client, local_tools(tmp_path), sink)

    assert len(claude.requests) == MAX_ITERATIONS
    steps = "\n\n".join(f"Step {n}." for n in range(1, MAX_ITERATIONS + 1))
    # Everything Claude wrote stays, and the person is told why the answer stops there
    # (its notes between tool calls were shown; the answer itself is only the line).
    assert sink.text == steps + "\n\n" + TOO_MANY_STEPS
    assert result.text == TOO_MANY_STEPS
    assert (result.iterations, result.stop_reason) == (MAX_ITERATIONS, "tool_use")
    # Every step but the last had its result sent back.
    last = claude.requests[-1]["messages"]
    assert len(last) == 1 + 2 * (MAX_ITERATIONS - 1)
    assert all(m["content"][0]["type"] == "tool_result" for m in last[2::2])


async def test_a_loop_of_silent_tool_calls_still_tells_the_person_why_it_stopped(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    for _ in range(3):
        claude.reply_tool_use("memory", VIEW_ROOT)
    claude.reply("This answer is never asked for.")

    result = await run(claude_client, local_tools(tmp_path), sink, max_iterations=3)

    assert len(claude.requests) == 3
    assert claude.pending == 1
    assert result.text == TOO_MANY_STEPS
    assert sink.text.strip() == result.text
    assert sink.progress == ["is checking its memory..."] * 3


async def test_an_answer_on_the_last_allowed_call_has_no_note(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    claude.reply_tool_use("memory", VIEW_ROOT, text="Checking.")
    claude.reply("All done.")

    result = await run(claude_client, local_tools(tmp_path), sink, max_iterations=2)

    assert sink.text == "Checking.\n\nAll done."
    assert result.text == "All done."
    assert (result.iterations, result.stop_reason) == (2, "end_turn")


async def test_without_tools_claude_is_offered_none_and_answers_in_one_call(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink
) -> None:
    answer = "Tea is a fine choice, and here is why it suits long afternoons."
    claude.reply(answer)

    result = await run(claude_client, ToolRegistry(), sink)

    [request] = claude.requests
    assert "tools" not in request
    # Streamed: the text arrives in several pieces, not as one block at the end.
    assert len(sink.pieces) > 1
    assert sink.text == result.text == answer
    assert (result.iterations, result.stop_reason, sink.progress) == (1, "end_turn", [])


async def test_a_tool_call_cut_off_by_the_token_limit_is_not_run(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    create = {"command": "create", "path": NOTES_PATH, "file_text": "Prefers tea.\n"}
    claude.reply_blocks(
        [
            {"type": "text", "text": "Saving that now."},
            {"type": "tool_use", "id": "toolu_cut", "name": "memory", "input": create},
        ],
        stop_reason="max_tokens",
    )

    result = await run(claude_client, local_tools(tmp_path), sink)

    assert len(claude.requests) == 1
    assert (result.text, result.iterations, result.stop_reason) == (CUT_SHORT, 1, "max_tokens")
    assert sink.text == f"Saving that now.\n\n{CUT_SHORT}"
    assert sink.progress == []
    assert not (tmp_path / "memories" / "users" / USER / "notes.md").exists()


async def test_many_tool_calls_show_as_ten_tasks_and_one_for_the_rest(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    views = [
        {"type": "tool_use", "id": f"toolu_v{n}", "name": "memory", "input": VIEW_ROOT}
        for n in range(25)
    ]
    claude.reply_blocks(views)
    claude.reply("Looked.")

    await run(claude_client, local_tools(tmp_path), sink)

    latest = {task.id: task for task in sink.tasks}
    assert len(latest) == 11 and all(t.status == "complete" for t in latest.values())
    assert latest["memory-more"].title == "15 more memory steps"
