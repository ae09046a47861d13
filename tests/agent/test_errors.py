"""Which apology the person gets for each way a Claude call can fail, as the failures really
surface from Orion's Claude client talking to FakeClaude: a fixed, friendly sentence, never
the exception's text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from anthropic import AsyncAnthropic

from app.agent.errors import (
    BUSY,
    GENERIC,
    MISCONFIGURED,
    OVERLOADED,
    UNREACHABLE,
    friendly_error,
)
from app.agent.loop import run_agent_loop
from app.agent.tool_registry import ToolRegistry
from app.agent.toolbox import tools_for_turn
from app.memory.scopes import MemoryScope
from app.storage.local_directory import LocalDirectoryStore
from tests.agent.conftest import MODEL, RecordingSink
from tests.backends import THREAD, USER
from tests.fakes.anthropic_api import FakeClaude

SCOPE = MemoryScope(USER, THREAD)
QUESTION = [{"role": "user", "content": "What's on my plate today?"}]
# In every error body below: it must never reach the person.
DETAIL = "req_7f3a upstream eu-west-4 shard 12"


async def failed_turn(
    client: AsyncAnthropic, sink: RecordingSink, tools: ToolRegistry | None = None
) -> BaseException:
    with pytest.raises(Exception) as raised:  # which one is what the caller checks
        await run_agent_loop(
            client,
            model=MODEL,
            system=[{"type": "text", "text": "You are Orion."}],
            messages=QUESTION,
            tools=tools or ToolRegistry(),
            sink=sink,
        )
    return raised.value


@pytest.mark.parametrize(
    ("script_failure", "apology"),
    [
        pytest.param(
            lambda c: c.fail(529, "overloaded_error", DETAIL), OVERLOADED, id="overloaded-529"
        ),
        pytest.param(
            lambda c: c.fail(429, "rate_limit_error", DETAIL, retry_after=0.01),
            BUSY,
            id="rate-limited-429",
        ),
        pytest.param(
            lambda c: c.fail_mid_stream("Today you have", "overloaded_error", DETAIL),
            OVERLOADED,
            id="overloaded-mid-stream",
        ),
        pytest.param(
            lambda c: c.fail_mid_stream("Today you have", "rate_limit_error", DETAIL),
            BUSY,
            id="rate-limited-mid-stream",
        ),
        pytest.param(
            lambda c: c.fail_mid_stream("Today you have", "api_error", DETAIL),
            UNREACHABLE,
            id="api-error-mid-stream",
        ),
        pytest.param(lambda c: c.fail(500, "api_error", DETAIL), UNREACHABLE, id="api-error-500"),
        pytest.param(lambda c: c.drop_connection(), UNREACHABLE, id="connection-dropped"),
        pytest.param(
            lambda c: c.drop_connection("Today you have three"),
            UNREACHABLE,
            id="dropped-mid-stream",
        ),
        pytest.param(
            lambda c: c.fail(400, "invalid_request_error", DETAIL), GENERIC, id="bad-request-400"
        ),
        pytest.param(
            lambda c: c.fail(401, "authentication_error", DETAIL),
            MISCONFIGURED,
            id="bad-api-key-401",
        ),
        pytest.param(
            lambda c: c.fail(403, "permission_error", DETAIL),
            MISCONFIGURED,
            id="key-without-access-403",
        ),
        pytest.param(
            lambda c: c.fail(404, "not_found_error", DETAIL), MISCONFIGURED, id="no-such-model-404"
        ),
        pytest.param(
            lambda c: c.fail(413, "request_too_large", DETAIL), GENERIC, id="too-large-413"
        ),
    ],
)
async def test_each_claude_failure_maps_to_its_apology(
    claude: FakeClaude,
    claude_client: AsyncAnthropic,
    sink: RecordingSink,
    script_failure: Callable[[FakeClaude], None],
    apology: str,
) -> None:
    script_failure(claude)

    error = await failed_turn(claude_client, sink)

    assert friendly_error(error) == apology
    assert DETAIL not in apology and DETAIL not in sink.text


async def test_text_streamed_before_a_failure_was_already_shown(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink
) -> None:
    claude.fail_mid_stream("Today you have three meetings", "overloaded_error", DETAIL)

    error = await failed_turn(claude_client, sink)

    # Forwarded as it arrived, before the stream broke: the apology follows what is shown.
    assert sink.text == "Today you have three meetings"
    assert friendly_error(error) == OVERLOADED


async def test_a_claude_call_that_times_out_is_unreachable(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink
) -> None:
    claude.delay(1.0)

    error = await failed_turn(claude_client.with_options(timeout=0.2), sink)

    assert friendly_error(error) == UNREACHABLE


async def test_a_failure_after_a_tool_step_is_mapped_the_same_and_the_tool_work_stays(
    claude: FakeClaude, claude_client: AsyncAnthropic, sink: RecordingSink, tmp_path: Path
) -> None:
    create = {"command": "create", "path": f"/memories/users/{USER}/today.md", "file_text": "x\n"}
    claude.reply_tool_use("memory", create, text="Let me check.")
    claude.fail(529, "overloaded_error", DETAIL)
    store = LocalDirectoryStore(tmp_path / "memories")

    error = await failed_turn(claude_client, sink, tools_for_turn(store=store, scope=SCOPE))

    assert friendly_error(error) == OVERLOADED
    assert len(claude.requests) == 2
    assert sink.text.startswith("Let me check.")
    assert (tmp_path / "memories" / "people" / USER / "memory" / "today.md").read_text() == "x\n"


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError(f"unexpected: {DETAIL}"),
        KeyError(DETAIL),
        ValueError("a Slack token xoxb-123-456 leaked into a message"),
    ],
    ids=["runtime", "key", "value"],
)
def test_anything_else_gets_the_generic_apology_without_its_text(error: Exception) -> None:
    apology = friendly_error(error)

    assert apology == GENERIC
    assert str(error) not in apology
