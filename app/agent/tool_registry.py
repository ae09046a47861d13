"""Which tools Claude may call in one turn, and how a call runs: never raising, a `ToolError` a
model-visible error, any other failure a generic one (logged, never shown)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from anthropic.lib.tools import BetaAsyncBuiltinFunctionTool
from anthropic.tools import ToolError

from app.memory.tool.errors import MemoryToolError
from app.observability.logging import get_logger, since

log = get_logger(__name__)


@dataclass(frozen=True)
class ToolOutcome:
    result: dict[str, Any]  # the `tool_result` content block
    failed: bool = False
    # Failed on Orion's side (storage unavailable, an unexpected error), not because of
    # what the model asked: nothing the call should have done was done.
    internal: bool = False


class ToolRegistry:
    def __init__(self, tools: Iterable[BetaAsyncBuiltinFunctionTool] = ()) -> None:
        self._tools = {tool.name: tool for tool in tools}

    def params(self) -> list[dict[str, Any]]:
        return [dict(tool.to_dict()) for tool in self._tools.values()]

    async def outcome(self, tool_use_id: str, name: str, tool_input: object) -> ToolOutcome:
        """Run one `tool_use` block: its `tool_result` block, and how it went."""
        started = time.perf_counter()
        tool = self._tools.get(name)
        internal = False
        try:
            if tool is None:
                raise ToolError(f"Unknown tool: {name}")
            output = await tool.call(tool_input)
            content, is_error = _as_text(output), False
        except ToolError as exc:
            content, is_error = _as_text(exc.content), True
            internal = isinstance(exc, MemoryToolError) and exc.internal
        except Exception:
            log.exception("tool.failed", tool=name)
            content, is_error = f"The {name} tool failed unexpectedly. Try again later.", True
            internal = True
        log.debug("tool.call", tool=name, ok=not is_error, **since(started))
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id}
        result["content"] = content
        if is_error:
            result["is_error"] = True
        return ToolOutcome(result, failed=is_error, internal=internal)


def _as_text(output: object) -> str | list[Any]:
    # Tools return a string or a list of content blocks; pass blocks through unchanged.
    return output if isinstance(output, str | list) else str(output)
