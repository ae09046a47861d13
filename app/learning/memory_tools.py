"""Claude's `memory_overview` (the Home tab's own inventory) and `forget` (one item), bound to the
turn's person. Erasing everything is never the model's: only the person's click or an operator's."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from anthropic.lib.tools import BetaAsyncBuiltinFunctionTool
from anthropic.tools import ToolError
from anthropic.types.beta import BetaToolParam

from app.learning.erasure import FORGETTABLE, forget_item
from app.learning.memory_document import render_memory
from app.learning.memory_inventory import take_inventory
from app.memory.scopes import MemoryScope
from app.observability import tracing
from app.observability.logging import get_logger, since
from app.storage.store import ObjectStore

log = get_logger(__name__)

OVERVIEW_TOOL_NAME = "memory_overview"
FORGET_TOOL_NAME = "forget"


@dataclass(eq=False)
class _PersonsTool(BetaAsyncBuiltinFunctionTool):
    """A tool bound to the turn's person: the model's input only names the item."""

    store: ObjectStore
    scope: MemoryScope


class MemoryOverviewTool(_PersonsTool):
    def to_dict(self) -> BetaToolParam:
        return {
            "name": OVERVIEW_TOOL_NAME,
            "description": (
                "List everything Orion keeps about the person you are talking to: their "
                "preferences (with when each was learned), the notes saved about them, and "
                "their recent conversations. Use it whenever they ask what you remember or "
                "know about them; answer only from its result."
            ),
            "input_schema": {"type": "object", "properties": {}},
        }

    async def call(self, input: object) -> str:
        started = time.perf_counter()
        with tracing.observe("tool.memory_overview", as_type="tool") as span:
            inventory = await take_inventory(self.store, self.scope.user_id)
            counts = inventory.counts()
            span.update(output=counts)
            log.info("memory.show", via="agent", **counts, **since(started))
            return render_memory(inventory, full=False)


class ForgetTool(_PersonsTool):
    def to_dict(self) -> BetaToolParam:
        return {
            "name": FORGET_TOOL_NAME,
            "description": (
                "Forget one thing Orion remembers about the person, when they ask you to: "
                "a preference (by its key, e.g. 'language'), a note (by its /memories path) "
                "or a conversation (by its thread id), as memory_overview lists them. "
                "Confirm to the person what was forgotten."
            ),
            "input_schema": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": list(FORGETTABLE)},
                    "id": {"type": "string", "description": "The key, path or thread id."},
                },
                "required": ["kind", "id"],
            },
        }

    async def call(self, input: object) -> str:
        kind, item = _parse_input(input)
        with tracing.observe("tool.forget", as_type="tool", input={"kind": kind}) as span:
            try:
                forgotten = await forget_item(self.store, self.scope.user_id, kind, item) > 0
            except ValueError:
                if kind == "note":
                    raise ToolError(f"{item} is not one of this person's notes.") from None
                raise ToolError(f"{item} is not a conversation id.") from None
            span.update(output={"forgotten": forgotten})
            log.info("memory.forget", via="agent", kind=kind, forgotten=forgotten)
        if not forgotten:
            raise ToolError(f"There is no {kind} {item!r} to forget.")
        return f"Forgotten: the {kind} {item}."


def _parse_input(input: object) -> tuple[str, str]:
    if not isinstance(input, Mapping):
        raise ToolError("The forget tool expects an object with `kind` and `id`.")
    kind: Any = input.get("kind")
    item: Any = input.get("id")
    if kind not in FORGETTABLE:
        raise ToolError(f"`kind` must be one of {', '.join(FORGETTABLE)}.")
    if not isinstance(item, str) or not item.strip():
        raise ToolError("`id` must name the item to forget.")
    return kind, item.strip()
