"""What the Slack layer hands the agent for one turn (kept import-light for start-up)."""

from __future__ import annotations

from dataclasses import dataclass

from app.agent.history import ThreadMessage


@dataclass(frozen=True)
class TurnRequest:
    user_id: str
    channel_id: str
    thread_ts: str
    history: list[ThreadMessage]
    # The memory block saved with the thread at its start; None when none was saved
    # (an old thread, a restart, another instance), in which case it is reloaded.
    memory_context: str | None = None
    # What is left of the person's storage budget for reloading it (None: the agent's
    # full load budget). Zero skips the reload: the answer goes out without memory.
    memory_budget_s: float | None = None
