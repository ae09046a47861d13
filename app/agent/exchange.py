"""One message's turn after its opening, the same in Slack and `orion chat`: preferences saved
beside the answer, the transcript written once as the turn ends, then what the turn taught."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from app.learning.conversation_record import said

if TYPE_CHECKING:
    from app.agent.memory_notes import MemoryNote
    from app.agent.request import TurnRequest
    from app.agent.turn import Agent
    from app.learning.conversations import TurnTranscript
    from app.storage.store import StoredObject


@dataclass
class Exchange:
    agent: Agent
    # How work after the reply runs (`work`, `name=`): Slack's background tasks, the chat's own.
    spawn: Callable[..., asyncio.Future[None]]
    began: datetime = field(default_factory=lambda: datetime.now(UTC))
    request: TurnRequest | None = None
    # Where the turn writes what was said, the question already in it (None: kept nowhere).
    transcript: TurnTranscript | None = None
    capturing: asyncio.Future[None] | None = None
    ended: bool = False  # its transcript written and its end begun: nothing more is kept

    def begin(self, request: TurnRequest, transcript: TurnTranscript | None, text: str) -> None:
        self.request, self.transcript = request, transcript
        if request.remembers and request.channel is None:
            # Beside the answer, not before it: stated preferences are saved at once.
            self.capturing = self.spawn(
                self.agent.capture_preferences(request, text), name="memory.preferences"
            )

    def keep_answer(self, text: str, *, ts: str | None = None) -> None:
        """The answer, as the person saw it, into the transcript (the next message reads it)."""
        if self.transcript is not None and text and not self.ended:
            self.transcript.add(said("assistant", text, at=datetime.now(UTC), ts=ts))

    def end(self, answer: str | None) -> asyncio.Future[StoredObject | None] | None:
        """The transcript's one write, begun now and returned (the next message waits for
        it); then, after a captured preference, what the turn taught (`answer`: None for
        nothing: failed, stopped, cut off) and its settle with the owner's erasure guard."""
        if self.request is None or self.ended:
            return None
        self.ended = True
        write = self.transcript.write() if self.transcript is not None else None
        self.spawn(self._after(self.request, answer), name="memory.after_turn")
        return write

    async def _after(self, request: TurnRequest, answer: str | None) -> None:
        if self.capturing is not None:
            await asyncio.gather(self.capturing, return_exceptions=True)
        await self.agent.after_turn(request, answer, self.transcript)

    async def note(self) -> MemoryNote | None:
        """What the store confirmed the turn changing, once its preferences are saved (so
        the note names them too); None for no note."""
        if self.request is None:
            return None
        if self.capturing is not None:
            await asyncio.wait({self.capturing})  # never cancelled here: it is the save itself
        return await self.agent.memory_note(self.request)
