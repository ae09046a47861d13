"""One turn of conversation, and the memory hooks around it.

- `answer`: the before-turn step (the memory block for the system prompt), then the agent
  loop, under one span.
- `capture_preferences`: as soon as a message arrives, preferences it states are saved.
- `after_turn`: once the reply is complete, the thread's session summary is updated.
- `memory_note`: what the turn's memory tool and captured preferences changed, as the
  store confirmed it (recorded in `TurnRequest.changes`), for the note under the answer.

A turn whose answer Claude's safety classifiers refused keeps nothing: `after_turn` writes
no summary, and `memory_note` puts back what the turn changed (a captured preference, a
memory-tool write) instead of noting it.

The hooks are best-effort: bounded in time, failures are warnings in the log, and nothing
they do can change or delay the reply (the Slack listener runs the last two in the
background). With memory switched off (no store) they do nothing at all. Each logs one
line with its outcome and duration, so log-based metrics can count and time them; no line
carries memory contents.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from app.agent.history import ThreadMessage, build_messages
from app.agent.loop import LoopResult, run_agent_loop
from app.agent.memory_notes import MemoryNote, NoteRequest, note_for_turn
from app.agent.memory_task import restore_finished
from app.agent.memory_tasks import MemoryTasks
from app.agent.prompts import build_system_prompt
from app.agent.reply_sink import ReplySink
from app.agent.request import TurnRequest
from app.agent.summarizer import ClaudeSummarizer
from app.agent.thinking import ANSWER_THINKING, SUMMARY_THINKING, Thinking
from app.agent.toolbox import channel_tools_for_turn, tools_for_turn
from app.learning.channel_memory import erase_again_if_erased
from app.learning.channel_summary import update_channel_summary
from app.learning.erasure import forget_again_if_erased
from app.learning.preference_detection import detect_preferences
from app.learning.preferences import save_preferences
from app.learning.recall import RecallLog
from app.learning.session_index import IndexedToday
from app.learning.session_summary import SummaryOutcome, update_session_summary
from app.learning.transcript import Utterance
from app.learning.undo import revert_changes
from app.memory.change_log import ChangeLog, RecordingStore
from app.memory.restore import restore_memory
from app.memory.scopes import ChannelMemoryScope, MemoryScope, channel_summary_key
from app.memory.token_estimate import estimate_tokens
from app.memory.tool.guide import channel_memory_guide, memory_tool_guide
from app.observability import tracing
from app.observability.logging import get_logger
from app.storage.deadline import seconds_until
from app.storage.store import ObjectStore

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

log = get_logger(__name__)


@dataclass(frozen=True)
class MemorySettings:
    load_budget_s: float
    token_budget: int
    summary_model: str
    summary_timeout_s: float = 10.0
    summary_thinking: Thinking = SUMMARY_THINKING
    # Everything the after-turn step does (summary call, reads, writes), end to end.
    after_turn_budget_s: float = 20.0
    preferences_budget_s: float = 10.0
    # Whether answers that changed memory carry a note of it (MEMORY_NOTES), for people
    # who have not chosen on their Home tab.
    notes_shown_by_default: bool = True


class Agent:
    """Answers one message at a time; holds the long-lived clients."""

    def __init__(
        self,
        *,
        claude: AsyncAnthropic,
        model: str,
        store: ObjectStore | None,
        memory: MemorySettings,
        thinking: Thinking = ANSWER_THINKING,
    ) -> None:
        self._claude = claude
        self._model = model
        self._store = store
        self._memory = memory
        self._thinking = thinking
        self._summarize = ClaudeSummarizer(
            claude,
            model=memory.summary_model,
            timeout_s=memory.summary_timeout_s,
            thinking=memory.summary_thinking,
        )
        self._indexed_today = IndexedToday()

    async def answer(self, turn: TurnRequest, sink: ReplySink) -> LoopResult:
        recalls = RecallLog()
        tasks = MemoryTasks(sink, recalls)
        store = self._store if turn.remembers and not turn.memory_off else None
        if turn.channel is not None:
            # A channel's thread: the channel's memory, nobody's own.
            channel_scope = ChannelMemoryScope(turn.channel.channel_id)
            guide = channel_memory_guide(channel_scope)
            tools = channel_tools_for_turn(
                store=store,
                recall=turn.channel,
                actor=turn.user_id,
                changes=turn.changes,
                link=sink.link_to,
            )
        else:
            scope = MemoryScope(turn.user_id, turn.thread_ts)
            guide = memory_tool_guide(scope)
            tools = tools_for_turn(
                store=store,
                scope=scope,
                recalls=recalls,
                changes=turn.changes,
                link=sink.link_to,
            )
        with tracing.observe("agent.turn", input={"history_messages": len(turn.history)}) as span:
            memory_context = await self._before_turn(turn, tasks)
            system = build_system_prompt(
                memory_guide=guide if store is not None else None,
                memory_context=memory_context,
                recall=store is not None,
                in_channel=turn.channel is not None,
            )
            result = await run_agent_loop(
                self._claude,
                model=self._model,
                system=system,
                messages=build_messages(turn.history),
                tools=tools,
                sink=sink,
                tasks=tasks,
                thinking=self._thinking,
            )
            if result.refused:
                turn.outcome.refused = True
            span.update(
                output={"chars": len(result.text)},
                metadata={"iterations": result.iterations, "stop_reason": result.stop_reason},
            )
        return result

    async def _before_turn(self, turn: TurnRequest, tasks: MemoryTasks) -> str | None:
        """The memory block for this turn: the thread's saved one, or freshly loaded; the
        person is shown how the restore went (`tasks`).

        A failure here costs the turn its memory, never its answer.
        """
        if self._store is None or turn.memory_off:
            return None
        in_channel = turn.channel is not None
        if not turn.remembers:
            await tasks.show(restore_finished(restored=False, found=False, in_channel=in_channel))
            return None
        started = time.perf_counter()
        with tracing.observe("memory.before_turn") as span:
            try:
                context, source, complete = await self._memory_context(self._store, turn)
            except Exception as exc:
                log.warning(
                    "memory.before_turn.failed",
                    error=type(exc).__name__,
                    exc_info=exc,
                    **_since(started),
                )
                span.update(level="WARNING", output={"ok": False, "error": type(exc).__name__})
                await tasks.show(
                    restore_finished(restored=False, found=False, in_channel=in_channel)
                )
                return None
            await tasks.show(
                restore_finished(restored=complete, found=bool(context), in_channel=in_channel)
            )
            tokens = estimate_tokens(context) if context else 0
            outcome = {"source": source, "token_estimate": tokens, "injected": bool(context)}
            tracing.event("memory.context.inject", metadata=outcome)
            log.info("memory.before_turn", ok=True, **outcome, **_since(started))
            span.update(output={"ok": True, **outcome})
        return context or None

    async def _memory_context(
        self, store: ObjectStore, turn: TurnRequest
    ) -> tuple[str | None, str, bool]:
        """The memory block, where it came from, and whether every read answered."""
        if turn.memory_context is not None:
            return turn.memory_context, "restored", turn.memory_complete
        budget_s = self._memory.load_budget_s
        if (left := seconds_until(turn.memory_deadline)) is not None:
            budget_s = min(budget_s, left)
        if budget_s <= 0:
            return None, "out_of_budget", False  # storage was too slow to answer in time
        restored = await restore_memory(
            store,
            user_id=turn.user_id,
            thread_ts=turn.thread_ts,
            budget_s=budget_s,
            token_budget=self._memory.token_budget,
            channel_summary_key=(
                channel_summary_key(turn.channel.channel_id, turn.thread_ts)
                if turn.channel is not None
                else None
            ),
        )
        return restored.context, "reloaded", restored.complete

    async def capture_preferences(
        self,
        user_id: str,
        text: str,
        *,
        channel: str | None = None,
        thread_ts: str | None = None,
        changes: ChangeLog | None = None,
    ) -> None:
        """Save the preferences a message states ("call me Sam"), without a model call,
        with the thread they were stated in; what changed goes in `changes` (the turn's)."""
        if self._store is None:
            return
        store = self._store if changes is None else RecordingStore(self._store, changes)
        # Bounded (a prefix of the message, in linear time), and still off the event loop:
        # whatever a message holds, nobody else's event waits for it to be read.
        found = await asyncio.to_thread(detect_preferences, text)
        if not found:
            return
        keys = sorted({preference.key for preference in found})
        started, began = time.perf_counter(), datetime.now(UTC)
        with tracing.observe("memory.preferences.write", metadata={"keys": keys}) as span:
            try:
                async with asyncio.timeout(self._memory.preferences_budget_s):
                    changed = await save_preferences(
                        store, user_id, found, channel=channel, thread_ts=thread_ts
                    )
                    await self._unless_erased(user_id, began, channel)
            except Exception as exc:
                log.warning(
                    "memory.preferences.write.failed",
                    keys=keys,
                    error=type(exc).__name__,
                    exc_info=exc,
                    **_since(started),
                )
                span.update(level="WARNING", output={"ok": False, "error": type(exc).__name__})
                return
            log.info("memory.preferences.write", keys=keys, changed=changed, **_since(started))
            span.update(output={"ok": True, "changed": changed})

    async def memory_note(self, turn: TurnRequest) -> MemoryNote | None:
        """What the turn changed in memory, for the note under its answer (with its undo
        kept); None for no note. Call it once the turn's writers are done; never raises."""
        if self._store is None or turn.changes is None:
            return None
        if turn.outcome.refused:
            await self._keep_nothing(self._store, turn, turn.changes)
            return None
        if turn.channel is not None:
            return None  # a channel's changes are in its own log (/orion memory), not noted
        request = NoteRequest(turn.user_id, turn.channel_id, turn.thread_ts, turn.started_at)
        try:
            return await note_for_turn(
                self._store,
                request,
                turn.changes,
                shown_by_default=self._memory.notes_shown_by_default,
                # Half the preferences' budget for each of its two steps: the note waits
                # no longer than a captured preference may.
                budget_s=self._memory.preferences_budget_s / 2,
            )
        except Exception as exc:
            log.warning("memory.note.failed", error=type(exc).__name__, exc_info=exc)
            return None

    async def _keep_nothing(
        self, store: ObjectStore, turn: TurnRequest, changes: ChangeLog
    ) -> None:
        """Put back what a refused turn changed in memory (each write conditional on what
        the turn left, so nothing changed since, an erasure included, is undone), then
        check for an erasure as any unfinished turn does. Never raises."""
        found = changes.changes()
        if found:
            try:
                async with asyncio.timeout(self._memory.preferences_budget_s):
                    changed_since = await revert_changes(store, found)
            except Exception as exc:
                log.warning(
                    "memory.refused_turn.revert_failed", error=type(exc).__name__, exc_info=exc
                )
            else:
                log.info(
                    "memory.refused_turn.reverted",
                    files=len(found),
                    changed_since=len(changed_since),
                )
        await self.after_unfinished_turn(turn)

    async def after_turn(
        self, turn: TurnRequest, answer: str, *, transcript: Sequence[Utterance] | None = None
    ) -> None:
        """Update the thread's session summary (and the person's session index), and the
        person's search index with every message of `transcript` (the conversation as
        Orion keeps it, answer included; None: the turn's history and `answer`).

        Call it once the reply is complete; it never raises.
        """
        if self._store is None or not turn.user_id or not turn.remembers:
            return
        if turn.outcome.refused:
            log.info(
                "memory.after_turn", ok=True, written=False, source="skipped", reason="refusal"
            )
            return
        with tracing.observe(
            "memory.after_turn", input={"history_messages": len(turn.history)}
        ) as span:
            # From inside the span: the logged duration is the step's own, within its span
            # (opening a span can take milliseconds on a busy instance).
            started = time.perf_counter()
            try:
                async with asyncio.timeout(self._memory.after_turn_budget_s):
                    outcome = await self._write_summary(self._store, turn, answer, transcript)
                    await self._unless_erased_turn(turn)
            except Exception as exc:
                error = "Timeout" if isinstance(exc, TimeoutError) else type(exc).__name__
                log.warning(
                    "memory.after_turn.failed", error=error, exc_info=exc, **_since(started)
                )
                span.update(level="WARNING", output={"ok": False, "error": error})
                # What the turn wrote before this failure (the memory tool's files, the
                # writes that landed) must not outlive an erasure either.
                await self.after_unfinished_turn(turn)
                return
            fields = {
                "written": outcome.written,
                "source": outcome.source,
                "summary_failure": outcome.failure,
                "conversation_chars": outcome.conversation_chars,
            }
            log.info("memory.after_turn", ok=True, **fields, **_since(started))
            span.update(output={"ok": True, **fields})

    async def after_unfinished_turn(self, turn: TurnRequest) -> None:
        """For a turn that failed or was stopped: it has no turn end, but the memory tool may
        have written during it. If its person asked to be forgotten meanwhile, that goes
        too. Never raises."""
        if self._store is None or not turn.user_id:
            return
        try:
            async with asyncio.timeout(self._memory.after_turn_budget_s):
                await self._unless_erased_turn(turn)
        except Exception as exc:
            log.warning("memory.erasure_check.failed", error=type(exc).__name__, exc_info=exc)

    async def _unless_erased_turn(self, turn: TurnRequest) -> None:
        """After a turn's writes: its person's erasure (what they wrote went into the
        transcript), and in a channel the channel's (Orion removed, the channel deleted)."""
        if turn.channel is None:
            await self._unless_erased(turn.user_id, turn.started_at, turn.channel_id)
            return
        assert self._store is not None
        await self._unless_erased(turn.user_id, turn.started_at, None)
        await erase_again_if_erased(self._store, turn.channel.channel_id, turn.started_at)

    async def _unless_erased(self, user_id: str, since: datetime, channel: str | None) -> None:
        """After writing about `user_id`: if they asked to be forgotten since `since`, what
        was just written goes too (the erasure's tombstone makes this race-free)."""
        assert self._store is not None
        channels = (channel,) if channel else ()
        if await forget_again_if_erased(self._store, user_id, since, dm_channels=channels):
            log.info("memory.erased_during_turn")

    async def _write_summary(
        self,
        store: ObjectStore,
        turn: TurnRequest,
        answer: str,
        transcript: Sequence[Utterance] | None,
    ) -> SummaryOutcome:
        with tracing.observe("memory.summary.write") as span:
            if turn.channel is not None:
                outcome = await update_channel_summary(
                    store,
                    channel_id=turn.channel.channel_id,
                    thread_ts=turn.thread_ts,
                    public=turn.channel.public,
                    history=[*turn.history, ThreadMessage("assistant", answer)],
                    summarize=self._summarize,
                    transcript=transcript,
                    actor=turn.user_id,
                )
            else:
                outcome = await update_session_summary(
                    store,
                    user_id=turn.user_id,
                    thread_ts=turn.thread_ts,
                    channel=turn.channel_id,
                    history=[*turn.history, ThreadMessage("assistant", answer)],
                    summarize=self._summarize,
                    transcript=transcript,
                    indexed=self._indexed_today,
                )
            span.update(
                output={
                    "written": outcome.written,
                    "source": outcome.source,
                    "summary_chars": outcome.summary_chars,
                    "failure": outcome.failure,
                }
            )
            return outcome


def _since(started: float) -> dict[str, float]:
    return {"duration_ms": round((time.perf_counter() - started) * 1000, 1)}
