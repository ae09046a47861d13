"""One turn of conversation: memory before the turn, the agent loop, under one span."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.agent.history import build_messages
from app.agent.loop import LoopResult, run_agent_loop
from app.agent.prompts import build_system_prompt
from app.agent.reply_sink import ReplySink
from app.agent.request import TurnRequest
from app.agent.toolbox import tools_for_turn
from app.memory.formatting import estimate_tokens
from app.memory.guide import memory_tool_guide
from app.memory.paths import MemoryScope
from app.memory.restore import restore_memory
from app.memory.store import MemoryStore
from app.observability import tracing
from app.observability.logging import get_logger

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

log = get_logger(__name__)


@dataclass(frozen=True)
class MemorySettings:
    load_budget_s: float
    token_budget: int


class Agent:
    """Answers one message at a time; holds the long-lived clients."""

    def __init__(
        self,
        *,
        claude: AsyncAnthropic,
        model: str,
        store: MemoryStore | None,
        memory: MemorySettings,
    ) -> None:
        self._claude = claude
        self._model = model
        self._store = store
        self._memory = memory

    async def answer(self, turn: TurnRequest, sink: ReplySink) -> LoopResult:
        scope = MemoryScope(turn.user_id, turn.thread_ts)
        with tracing.observe("agent.turn", input={"history_messages": len(turn.history)}) as span:
            memory_context = await self._before_turn(turn)
            system = build_system_prompt(
                memory_guide=memory_tool_guide(scope) if self._store is not None else None,
                memory_context=memory_context,
            )
            result = await run_agent_loop(
                self._claude,
                model=self._model,
                system=system,
                messages=build_messages(turn.history),
                tools=tools_for_turn(store=self._store, scope=scope),
                sink=sink,
            )
            span.update(
                output={"chars": len(result.text)},
                metadata={"iterations": result.iterations, "stop_reason": result.stop_reason},
            )
        return result

    async def _before_turn(self, turn: TurnRequest) -> str | None:
        """The memory block for this turn: the thread's saved one, or freshly loaded."""
        if self._store is None:
            return None
        context = turn.memory_context
        source = "thread_context"
        if context is None:
            source = "reloaded"
            restored = await restore_memory(
                self._store,
                user_id=turn.user_id,
                thread_ts=turn.thread_ts,
                budget_s=self._memory.load_budget_s,
                token_budget=self._memory.token_budget,
            )
            context = restored.context
        tokens = estimate_tokens(context) if context else 0
        tracing.event(
            "memory.context.inject",
            metadata={"source": source, "token_estimate": tokens, "injected": bool(context)},
        )
        log.info("memory.context.inject", source=source, token_estimate=tokens)
        return context or None
