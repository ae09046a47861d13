"""Running memory tool commands the way the tool runner does, for tests."""

from __future__ import annotations

from typing import Any

from anthropic.tools import ToolError

from app.memory.tool.scoped_tool import ScopedMemoryTool


async def run(tool: ScopedMemoryTool, **command: Any) -> str:
    result = await tool.call(command)
    assert isinstance(result, str)
    return result


async def refused(tool: ScopedMemoryTool, command: object) -> str:
    """The error text the model would get for `command` (which must fail)."""
    try:
        result = await tool.call(command)
    except ToolError as error:
        assert isinstance(error.content, str)
        return error.content
    raise AssertionError(f"expected a ToolError, got {result!r}")
