"""One turn of conversation and its memory hooks (docs/architecture.md, "How an event flows"), each
settling with its owner's erasure guard; the hooks are best-effort: bounded, never delaying the
reply, logging one line of outcome and duration, never contents. A refused turn keeps nothing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
from app.learning.channel_memory import after_channel_turn, changes_of, turn_changes, with_changes
from app.learning.conversations import TurnTranscript
from app.learning.guard import TAKE_BACK_BUDGET_S, Forgotten, Guard
from app.learning.preference_detection import detect_preferences
from app.learning.preferences import save_preferences
from app.learning.profile import Profile
from app.learning.recall import RecallLog
from app.learning.session_summary import SummaryOutcome, learn_from_turn
from app.learning.transcript import Utterance
from app.learning.undo import revert_changes
from app.learning.welcome import freshest_summary
from app.memory.change_log import ChangeLog, RecordingStore
from app.memory.retention import cutoff_of
from app.memory.scopes import ChannelMemoryScope, MemoryScope
from app.memory.token_estimate import estimate_tokens
from app.memory.tool.guide import channel_memory_guide, memory_tool_guide
from app.observability import tracing
from app.observability.audit import audit, channel_scope
from app.observability.logging import get_logger, since
from app.storage.breaker import FIRST_PROBE_S, StoreOffline
from app.storage.store import ObjectStore

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

log = get_logger(__name__)


@dataclass(frozen=True)
class MemorySettings:
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

    async def answer(self, turn: TurnRequest, sink: ReplySink) -> LoopResult:
        recalls = RecallLog()
        tasks = MemoryTasks(sink, recalls)
        guard = turn.guard
        store = guard.store if guard is not None else None
        if turn.channel is not None:
            # A channel's thread: the channel's memory, nobody's own.
            channel_scope_ = ChannelMemoryScope(turn.channel.channel_id)
            guide = channel_memory_guide(channel_scope_)
            tools = channel_tools_for_turn(
                store=store,
                recall=turn.channel,
                actor=turn.user_id,
                changes=turn.changes,
                logged=changes_of(guard.profile) if guard is not None else [],
                link=sink.link_to,
                message=turn.text,
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
                message=turn.text,
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
        """The memory block the turn opened with; the person is shown how the restore
        went (`tasks`). A turn without its memory goes on without it."""
        if self._store is None or turn.memory_off:
            return None
        in_channel = turn.channel is not None
        opening = turn.opening
        if opening is None or not turn.remembers:
            await tasks.show(restore_finished(restored=False, found=False, in_channel=in_channel))
            return None
        context = opening.context
        await tasks.show(
            restore_finished(restored=opening.complete, found=bool(context), in_channel=in_channel)
        )
        tokens = estimate_tokens(context) if context else 0
        outcome = {"source": "restored", "token_estimate": tokens, "injected": bool(context)}
        tracing.event("memory.context.inject", metadata=outcome)
        log.info("memory.before_turn", ok=True, **outcome)
        return context or None

    async def capture_preferences(self, turn: TurnRequest, text: str) -> None:
        """Save the preferences a message states ("call me Sam"), without a model call,
        with the thread they were stated in; what changed goes in the turn's `changes`."""
        guard, opening = turn.guard, turn.opening
        if guard is None or opening is None or turn.channel is not None:
            return
        store = guard.store if turn.changes is None else RecordingStore(guard.store, turn.changes)
        # Bounded (a prefix of the message, in linear time), and still off the event loop:
        # whatever a message holds, nobody else's event waits for it to be read.
        found = await asyncio.to_thread(detect_preferences, text)
        if not found:
            return
        keys = sorted({preference.key for preference in found})
        started = time.perf_counter()
        with tracing.observe("memory.preferences.write", metadata={"keys": keys}) as span:
            try:
                async with asyncio.timeout(self._memory.preferences_budget_s):
                    changed = await save_preferences(
                        store,
                        turn.user_id,
                        found,
                        channel=turn.channel_id,
                        thread_ts=turn.thread_ts,
                        already_read=opening.preferences,
                    )
            except Exception as exc:
                log.warning(
                    "memory.preferences.write.failed", keys=keys, exc_info=exc, **since(started)
                )
                span.update(level="WARNING", output={"ok": False, "error": type(exc).__name__})
                return
            log.info("memory.preferences.write", keys=keys, changed=changed, **since(started))
            span.update(output={"ok": True, "changed": changed})

    async def memory_note(self, turn: TurnRequest) -> MemoryNote | None:
        """What the turn changed in memory, for the note under its answer (with its undo
        kept); None for no note. Call it once the turn's writers are done; never raises."""
        guard = turn.guard
        if guard is None or turn.changes is None:
            return None
        if turn.outcome.refused:
            await self._keep_nothing(guard.store, turn.changes)
            return None
        if turn.channel is not None:
            return None  # a channel's changes are in its own log (/orion memory), not noted
        request = NoteRequest(turn.user_id, turn.thread_ts, turn.started_at, guard)
        try:
            return await note_for_turn(
                request,
                turn.changes,
                shown_by_default=self._memory.notes_shown_by_default,
                # Half the preferences' budget for each of its two steps: the note waits
                # no longer than a captured preference may.
                budget_s=self._memory.preferences_budget_s / 2,
            )
        except Exception as exc:
            log.warning("memory.note.failed", exc_info=exc)
            return None

    async def _keep_nothing(self, store: ObjectStore, changes: ChangeLog) -> None:
        """Put back what a refused turn changed in memory (each write conditional on what the turn
        left, so nothing changed since, an erasure included, is undone). Never raises."""
        found = changes.changes()
        if not found:
            return
        try:
            async with asyncio.timeout(self._memory.preferences_budget_s):
                changed_since = await revert_changes(store, found)
        except Exception as exc:
            log.warning("memory.refused_turn.revert_failed", exc_info=exc)
        else:
            log.info(
                "memory.refused_turn.reverted", files=len(found), changed_since=len(changed_since)
            )

    async def after_turn(
        self, turn: TurnRequest, answer: str | None, transcript: TurnTranscript | None
    ) -> None:
        """The turn's end, once its reply is over (`answer` None: unfinished or refused, which only
        settles): summary, index and profile, and in a channel its change log and authors' notes.
        Never raises."""
        guard = turn.guard
        if self._store is None or guard is None:
            return
        learn = answer is not None and not turn.outcome.refused
        also = self._channel_changes(turn)
        with tracing.observe(
            "memory.after_turn", input={"history_messages": len(turn.history)}
        ) as span:
            # From inside the span: the logged duration is the step's own, within its span
            # (opening a span can take milliseconds on a busy instance).
            started = time.perf_counter()
            fields: dict[str, object] = {"written": False, "source": "skipped"}
            try:
                async with asyncio.timeout(self._memory.after_turn_budget_s):
                    if transcript is not None:
                        await transcript.written()
                    if turn.channel is not None:
                        # Each author's pointer to the thread as soon as their words are
                        # kept: a turn end cut short must not leave them unforgettable.
                        # Words taken out again: the turn, which holds them, teaches nothing.
                        all_kept = await after_channel_turn(
                            guard.store,
                            turn.channel.channel_id,
                            turn.thread_ts,
                            public=turn.channel.public,
                            authors=transcript.authors if transcript is not None else set(),
                            since=turn.started_at,
                        )
                        learn = learn and all_kept
                    if learn:
                        outcome = await self._learn(turn, guard, answer or "", transcript, also)
                        fields = {
                            "written": outcome.written,
                            "source": outcome.source,
                            "summary_failure": outcome.failure,
                            "conversation_chars": outcome.conversation_chars,
                        }
                    else:
                        await guard.settle(also, thread_ts=turn.thread_ts)
                        fields["reason"] = "refusal" if turn.outcome.refused else "unfinished"
            except Forgotten as forgotten:
                fields["reason"] = f"{forgotten} forgotten meanwhile"
            except Exception as exc:
                error = "Timeout" if isinstance(exc, TimeoutError) else type(exc).__name__
                log.warning("memory.after_turn.failed", error=error, exc_info=exc, **since(started))
                span.update(level="WARNING", output={"ok": False, "error": error})
                await _settle_anyway(guard, turn.thread_ts)
                return
            log.info("memory.after_turn", ok=True, **fields, **since(started))
            span.update(output={"ok": True, **fields})

    def _channel_changes(self, turn: TurnRequest) -> Callable[[Profile], Profile] | None:
        """In a channel: the turn's changes to its memory, for the channel's log (who
        changed what, which its members see)."""
        if turn.channel is None or turn.changes is None:
            return None
        logged = turn_changes(turn.channel.channel_id, turn.changes.changes(), by=turn.user_id)
        return with_changes(logged) if logged else None

    async def _learn(
        self,
        turn: TurnRequest,
        guard: Guard,
        answer: str,
        transcript: TurnTranscript | None,
        also: Callable[[Profile], Profile] | None,
    ) -> SummaryOutcome:
        opening = turn.opening
        assert opening is not None
        record = opening.conversation.record if opening.conversation is not None else None
        previous = freshest_summary(
            guard.profile,
            turn.thread_ts,
            record.summary if record is not None else None,
            cutoff=cutoff_of(opening.store),
        )
        kept_messages = transcript.messages() if transcript is not None else None
        said: Sequence[Utterance] | None = kept_messages
        history = [*turn.history, ThreadMessage("assistant", answer)]
        if turn.channel is not None:
            # The thread as Slack shows it may hold words of members who asked to be
            # forgotten: a channel's summary is made of what its transcript kept.
            kept = {m.sent_at for m in kept_messages or ()}
            kept |= {float(m.ts) for m in kept_messages or () if m.ts}
            history = [m for m in history if m.sent_at is None or m.sent_at in kept]
        with tracing.observe("memory.summary.write") as span:
            outcome = await learn_from_turn(
                guard,
                thread_ts=turn.thread_ts,
                channel=turn.channel.channel_id if turn.channel is not None else turn.channel_id,
                history=history,
                previous=previous,
                summarize=self._summarize,
                transcript=said,
                also=also,
            )
            span.update(
                output={
                    "written": outcome.written,
                    "source": outcome.source,
                    "summary_chars": outcome.summary_chars,
                    "failure": outcome.failure,
                }
            )
        if turn.channel is not None and outcome.written:
            audit(
                "write",
                scope=channel_scope(turn.channel.channel_id),
                actor=turn.user_id,
                what="thread summary",
            )
        return outcome


async def _settle_anyway(guard: Guard, thread_ts: str) -> None:
    """After a turn end that failed part way: what the turn did write must still not
    outlive an erasure made meanwhile (its settle takes it back) — also when the failure
    was storage's, once its breaker sees it back. Never raises."""
    try:
        async with asyncio.timeout(TAKE_BACK_BUDGET_S):
            while True:
                try:
                    await guard.settle(thread_ts=thread_ts, write_back=False)
                    return
                except StoreOffline:
                    await asyncio.sleep(FIRST_PROBE_S)
    except Forgotten:
        pass  # taken back (logged by the guard)
    except Exception as exc:
        log.warning("memory.after_turn.settle_failed", exc_info=exc)
