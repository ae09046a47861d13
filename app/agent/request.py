"""What the Slack layer hands the agent for one turn (kept import-light for start-up)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from app.agent.history import ThreadMessage
from app.memory.change_log import ChangeLog

if TYPE_CHECKING:
    from app.learning.channel_recall import ChannelRecallScope
    from app.learning.guard import Guard
    from app.learning.opening import Opening


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
    # What the person wrote that the turn answers, as they wrote it (`recall` searches it
    # beside Claude's words).
    text: str = ""
    # What the turn read of its owner as it began (app/learning/opening.py): the memory
    # block, the profile, and the erasure guard every write of the turn passes. None when
    # memory is off or storage gave nothing in time: the answer goes out without memory.
    opening: Opening | None = None
    # When the turn began (an undo record says when its changes were made).
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    # Where the turn's memory writers record what they changed (the memory tool, a
    # captured preference), for the note under the answer; None: not recorded.
    changes: ChangeLog | None = None
    outcome: TurnOutcome = field(default_factory=TurnOutcome, compare=False)
    # The turn answers a mention in a channel thread: it uses the channel's memory (and
    # recall across what Slack says the channel may see), never the person's own.
    channel: ChannelRecallScope | None = None
    # Memory is switched off for this conversation (a channel whose admins chose answers
    # only): nothing is restored, shown as restoring, or kept.
    memory_off: bool = False

    @property
    def remembers(self) -> bool:
        """Whether the turn may use and keep memory: whose the conversation is, and
        whether its owner was forgotten, were read in time, and it is theirs."""
        return self.opening is not None and self.opening.remembers and not self.memory_off

    @property
    def guard(self) -> Guard | None:
        """The erasure guard of the turn's owner, when the turn may keep memory."""
        return self.opening.guard if self.opening is not None and self.remembers else None
