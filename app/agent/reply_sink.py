"""Where an answer goes while Claude writes it. The Slack layer implements this."""

from __future__ import annotations

from typing import Protocol


class ReplySink(Protocol):
    async def append(self, markdown: str) -> None:
        """Show more of the answer (standard Markdown)."""
        ...

    async def show_progress(self, status: str) -> None:
        """Tell the person what Orion is doing between pieces of the answer."""
        ...
