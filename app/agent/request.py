"""What the Slack layer hands the agent for one turn (kept import-light for start-up)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from app.agent.history import ThreadMessage
from app.memory.change_log import ChangeLog

if TYPE_CHECKING:
    from app.learning.channel_recall import ChannelRecallScope


@dataclass
class TurnOutcome:
    """What the turn's answer came to, for the steps after it (set by `Agent.answer`)."""

    # Claude's safety classifiers ended the answer: nothing of the turn is kept (no
    # summary, no captured preference, no memory-tool write).
    refused: bool = False


@dataclass(frozen=True)
class TurnRequest:
    user_id: str
    channel_id: str
    thread_ts: str
    history: list[ThreadMessage]
    # The memory block restored for the turn (beside its claim); None when it could not
    # be, in which case it is reloaded.
    memory_context: str | None = None
    # Whether every read of that restore answered (else it holds what arrived in time).
    memory_complete: bool = True
    # The person's storage deadline (`time.monotonic()`), which a reload must keep to as
    # well; None: the agent's full load budget. Once it has passed, the answer goes out
    # without memory.
    memory_deadline: float | None = None
    # When the turn began: if its person asks to be forgotten after this, what the turn
    # writes at its end is erased again (app/learning/erasure.py).
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    # Where the turn's memory writers record what they changed (the memory tool, a
    # captured preference), for the note under the answer; None: not recorded.
    changes: ChangeLog | None = None
    outcome: TurnOutcome = field(default_factory=TurnOutcome, compare=False)
    # False when nothing said whose the conversation is (storage did not answer in time):
    # the turn then reads and writes no memory at all, as if memory were off.
    remembers: bool = True
    # The turn answers a mention in a channel thread: it uses the channel's memory (and
    # recall across what Slack says the channel may see), never the person's own.
    channel: ChannelRecallScope | None = None
    # Memory is switched off for this conversation (a channel whose admins chose answers
    # only): nothing is restored, shown as restoring, or kept.
    memory_off: bool = False
