"""Where an answer goes while Claude writes it. The Slack layer implements this."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from app.agent.memory_task import MemoryTask


class ReplySink(Protocol):
    async def append(self, markdown: str) -> None:
        """Show more of the answer (standard Markdown)."""
        ...

    async def show_progress(self, status: str) -> None:
        """Tell the person what Orion is doing between pieces of the answer."""
        ...

    async def show_task(self, task: MemoryTask) -> None:
        """Show what Orion is doing with memory (a task's latest state), where the sink can;
        never waits for the answer's display."""
        ...

    def link_to(self, channel: str, ts: str, thread_ts: str | None = None) -> str | None:
        """A link the person can follow to message `ts` in `channel` (a reply in thread
        `thread_ts`), for the sources a search gives Claude; None where there is none."""
        ...
