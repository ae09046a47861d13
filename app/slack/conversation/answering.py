"""Answer one message with Claude, streamed into its thread, the same in both Slack experiences
(docs/architecture.md, "How an event flows"); the turn's end is app/agent/exchange.py's, a
stopped or cut-off one's (running_turns.py) too."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from slack_sdk.web.async_client import AsyncWebClient

from app.agent.errors import friendly_error
from app.agent.exchange import Exchange
from app.agent.memory_task import restore_started
from app.agent.request import TurnRequest
from app.config import refused_setting
from app.learning.conversation_record import moment_of
from app.memory.change_log import ChangeLog
from app.observability import tracing
from app.observability.logging import get_logger
from app.runtime.background import run_in_background
from app.services import ServiceProvider
from app.slack.conversation.channel_history import channel_turn_history
from app.slack.conversation.channel_turns import (
    CANNOT_CHECK,
    NOT_WITH_OTHER_ORGANISATIONS,
    OFF_HERE,
    ChannelGate,
    Verdict,
    open_channel_turn,
    recall_scope,
)
from app.slack.conversation.dedupe import EventDeduplicator
from app.slack.conversation.delivery import Delivery
from app.slack.conversation.memory_note_blocks import note_blocks, note_fallback
from app.slack.conversation.presence import Presence
from app.slack.conversation.reply_stream import (
    CUT_OFF_LINE,
    SlackReplyStream,
    answer_metadata,
    ask_again_blocks,
    feedback_blocks,
)
from app.slack.conversation.running_turns import EndedEarly, RunningTurns
from app.slack.conversation.task_display import TaskDisplaySupport
from app.slack.conversation.thread_links import ThreadLinks, WorkspaceLinks
from app.slack.conversation.turn_opening import NOT_YOURS, TurnOpening, open_turn, turn_history
from app.slack.conversation.unfurls import NO_UNFURLS
from app.slack.web_client import DmOwners
from app.storage.deadline import seconds_until

if TYPE_CHECKING:
    from slack_bolt.context.async_context import AsyncBoltContext

log = get_logger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class Incoming:
    """One message to answer, and the conversation (thread) it belongs to."""

    body: dict[str, Any]  # the event as delivered (its id is what retries share)
    # Bolt's, of the event's workspace: its team and enterprise, Orion's user id there (to
    # know its messages in a channel thread), and the URL for links to past conversations
    # when Bolt's authorization carries it (else Orion asks Slack once per workspace).
    context: AsyncBoltContext
    channel: str
    thread_ts: str  # the conversation's thread, where the answer goes
    ts: str
    user: str | None
    text: str
    retried: bool
    # A mention in a channel thread (channel_turns.py): the channel's conversation.
    in_channel: bool = False
    # The event says the channel is shared with another organisation (Slack Connect).
    shared_externally: bool = False


class Answerer:
    def __init__(
        self, provider: ServiceProvider, dedupe: EventDeduplicator, turns: RunningTurns
    ) -> None:
        self._provider = provider
        self._dedupe = dedupe
        self.turns = turns  # what a Stop or a restart ends early
        # Which workspaces refused Slack's task display, and each one's URL (for links to
        # past conversations): for the life of the process.
        self.task_display = TaskDisplaySupport()
        self._workspaces = WorkspaceLinks()
        self.dms = DmOwners()  # whose DM an event names, as Slack says

    async def answer(
        self, message: Incoming, *, client: AsyncWebClient, presence: Presence
    ) -> bool:
        """Answer `message`; False when another delivery of it is answering instead. Never raises
        for a failure the person can be told about: they get an apology."""
        settings = self._provider.settings
        reply = SlackReplyStream(
            client,
            channel=message.channel,
            thread_ts=message.thread_ts,
            user_id=message.user,
            team_id=message.context.team_id,
            presence=presence,
            task_display=self.task_display,
            links=self._links(client, message),
            # Slack stopped the stream: the person pressed Stop, wherever the event landed.
            on_stopped=lambda: self.turns.stop(message.channel, message.thread_ts),
        )
        delivery: Delivery[TurnOpening] = Delivery(
            lambda: self._dedupe.is_duplicate(message.body),
            retried=message.retried,
            budget_s=settings.memory_load_timeout_s,
            memory=lambda: self._open(message, client),
        )
        answering = False
        # What the turn has got to, for whoever ends it (answered, failed or early).
        turn = Exchange(self._provider.services.agent, run_in_background)
        try:
            if not await delivery.claim(presence.working):
                return False  # another delivery of this event is answering: leave it be
            answering = True
            work = asyncio.ensure_future(self._claimed(message, turn, reply, delivery, client))
            with self.turns.running(message.channel, message.thread_ts, work, message.user):
                try:
                    await work
                except asyncio.CancelledError:
                    if self.turns.why_ended(work) is None:
                        raise  # Orion itself is being cancelled
                # Ended early, even if the turn reached its end as it was (Slack refused
                # the stream's last call: the person stopped it right then).
                if (why := self.turns.why_ended(work)) is not None:
                    await self._ended_early(why, message, turn, reply, client)
        except Exception as exc:
            if (setting := refused_setting(exc, settings)) is not None:
                log.error("slack.claude_refused", problem=setting, exc_info=exc)
            else:
                log.error("slack.user_message.failed", exc_info=exc)
            await _apologise(reply, friendly_error(exc))
            # What the failed turn did save is still shown, and can be undone.
            await _show_memory_note(client, turn)
        finally:
            # Failed or ended early: what was said is kept, nothing is learned.
            self._end(turn, message, None)
            reply.discard()  # a no-op once the reply has ended (answered, apologised, stopped)
            # The opening's reads, when nothing awaited them (a duplicate, an early failure):
            # stopped, and their outcome collected so that nothing is left unobserved.
            delivery.memory.cancel()
            await asyncio.gather(delivery.memory, return_exceptions=True)
            if answering and not reply.ended_stream:
                await presence.idle()
        return True

    async def _open(self, message: Incoming, client: AsyncWebClient) -> TurnOpening:
        """The turn's opening, read once this process's last write to the conversation
        has ended (the exchange just answered is in it)."""
        await self.turns.written(message.channel, message.thread_ts)
        if message.in_channel:
            return await open_channel_turn(self._provider, client, message)
        team = message.context.team_id
        opening = await open_turn(
            self._provider,
            user=message.user,
            channel=message.channel,
            thread_ts=message.thread_ts,
            team=team,
            enterprise=message.context.enterprise_id,
            since=moment_of(message.ts),
        )
        if opening.vouched_in(message.channel):
            return opening
        return opening.in_dm(await self.dms.theirs(client, team, message.user, message.channel))

    async def _claimed(
        self,
        message: Incoming,
        turn: Exchange,
        reply: SlackReplyStream,
        delivery: Delivery[TurnOpening],
        client: AsyncWebClient,
    ) -> None:
        """The turn, once this delivery is the one answering."""
        memory_enabled = self._provider.settings.memory_enabled
        if memory_enabled and not message.in_channel:
            # Shown once this delivery is the one answering (a retry's twin shows nothing).
            await reply.show_task(restore_started())
        opening = await _within(delivery.memory, delivery.deadline)
        if opening is None:  # storage gave no answer in time: nothing of it is used
            opening = TurnOpening(None, None)
        gate = None
        if message.in_channel:
            # Nothing is shown before the channel says Orion answers there.
            gate = opening.channel or ChannelGate(None, None)
            if not await _answers_here(client, message, gate):
                return
            memory_enabled = memory_enabled and gate.verdict is Verdict.REMEMBER
            if memory_enabled:
                await reply.show_task(restore_started(in_channel=True))
        if memory_enabled and not opening.remembers and not opening.refused:
            # Nothing says whose the thread is: answered with what arrived, keeping none.
            log.info("slack.conversation.unchecked")
        if opening.refused:
            log.warning("slack.conversation.not_owner")
            await reply.fail(NOT_YOURS_IN_CHANNEL if message.in_channel else NOT_YOURS)
            return
        if message.in_channel:
            history = await channel_turn_history(client, opening, message)
        else:
            history = turn_history(
                opening, thread_ts=message.thread_ts, ts=message.ts, text=message.text
            )
        scope = await recall_scope(client, message, gate) if gate is not None else None
        request = TurnRequest(
            user_id=message.user or "",
            channel_id=message.channel,
            thread_ts=message.thread_ts,
            history=history.messages,
            text=message.text,
            opening=opening.opening,
            started_at=turn.began,
            changes=ChangeLog(),  # what this turn changes in memory, for its note
            channel=scope,
            memory_off=gate is not None and gate.verdict is not Verdict.REMEMBER,
        )
        turn.begin(request, history.transcript, message.text)
        result = await turn.agent.answer(request, reply)
        # The answer carries its trace, so feedback on it scores that very trace.
        await reply.finish(
            blocks=feedback_blocks(), metadata=answer_metadata(tracing.current_trace_id())
        )
        if reply.stopped:
            return  # by the person, as it ended: nothing is learned from it
        if result.refused:
            # Kept, the refused question would have the next turns refused too.
            if turn.transcript is not None:
                turn.transcript.take_back(message.ts)
        else:
            turn.keep_answer(result.text, ts=reply.ts)
        # Only now, with the reply complete: the summary must never hold up this reply
        # (nor wait for the note below).
        self._end(turn, message, result.text)
        await _show_memory_note(client, turn)

    async def _ended_early(
        self,
        why: EndedEarly,
        message: Incoming,
        turn: Exchange,
        reply: SlackReplyStream,
        client: AsyncWebClient,
    ) -> None:
        """Stopped by the person (the instance that got the Stop confirms it), or cut off
        by a restart (a line says so, with a button to ask again). What was written stays
        in the transcript."""
        if why is EndedEarly.CUT_OFF:
            log.info("slack.turn.cut_off", written_chars=len(reply.text))
            await reply.fail(CUT_OFF_LINE, ask_again_blocks(message.ts))
            turn.keep_answer(reply.text, ts=reply.ts)
            self._end(turn, message, None)  # before the process stops
            return
        log.info("slack.turn.stopped", written_chars=len(reply.text))
        await reply.stop()
        turn.keep_answer(reply.text, ts=reply.ts)
        # What the stopped turn did save is still shown, and can be undone.
        await _show_memory_note(client, turn)

    def _end(self, turn: Exchange, message: Incoming, answer: str | None) -> None:
        """The turn's end, its transcript's write known to the conversation's next message."""
        if (write := turn.end(answer)) is not None:
            self.turns.writing(message.channel, message.thread_ts, write)

    def _links(self, client: AsyncWebClient, message: Incoming) -> Callable[[], ThreadLinks]:
        """How this answer links to past conversations: with the URL Bolt's authorization
        knows, else the one Slack tells (asked beside the answer, once per workspace, so
        the answer never waits for it; until then, links open the conversation)."""
        authorized, team = message.context.authorize_result, message.context.team_id
        if authorized is not None and authorized.url:
            links = ThreadLinks(authorized.url, team)
            return lambda: links
        if self._workspaces.known(team).workspace_url is None:
            run_in_background(self._workspaces.get(client, team), name="slack.workspace_links")
        return lambda: self._workspaces.known(team)


async def _show_memory_note(client: AsyncWebClient, turn: Exchange) -> None:
    """The memory note under the answer: a message of its own, with an Undo
    (memory_undo.py). Never raises: the answer is already shown."""
    try:
        note = await turn.note()
        if note is None or turn.request is None:
            return
        lines = [str(line) for line in note.lines]
        await client.chat_postMessage(
            channel=turn.request.channel_id,
            thread_ts=turn.request.thread_ts,
            text=note_fallback(lines),
            blocks=note_blocks(lines, note.undo_id),
            **NO_UNFURLS,
        )
    except Exception as exc:  # Slack refused it, or anything else: the answer stands
        log.warning("slack.memory_note_failed", exc_info=exc)


# A thread recorded as someone's DM, or as another channel's.
NOT_YOURS_IN_CHANNEL = (
    "I can't continue that conversation in this thread. Mention me in a new thread and "
    "I'll pick up from what this channel remembers."
)
_LINES = {
    Verdict.OFF: OFF_HERE,
    Verdict.SHARED: NOT_WITH_OTHER_ORGANISATIONS,
    Verdict.UNCHECKED: CANNOT_CHECK,
}


async def _answers_here(client: AsyncWebClient, message: Incoming, gate: ChannelGate) -> bool:
    """Whether Orion answers the mention; when it does not, the person who mentioned it is told why
    in a line only they see — unless Orion is not in the channel at all, where it says nothing."""
    verdict = gate.verdict
    if verdict in (Verdict.REMEMBER, Verdict.ANSWER):
        return True
    log.info("slack.channel.not_answered", verdict=verdict.value)
    line = _LINES.get(verdict)
    if line is not None and message.user:
        try:
            await client.chat_postEphemeral(
                channel=message.channel, user=message.user, thread_ts=message.thread_ts, text=line
            )
        except Exception as exc:
            log.warning("slack.channel.line_failed", exc_info=exc)
    return False


# The opening's reads end at the storage deadline by themselves, answering with what
# arrived; building it from them takes a moment more, longer on a busy core. Cut off at
# the deadline itself, a turn would go out without the memory that did arrive.
OPENING_GRACE_S = 1.0


async def _within(saved: asyncio.Future[T], deadline: float | None) -> T | None:
    """The turn's opening once built from what arrived by the storage deadline; None
    when even that did not come."""
    left = seconds_until(deadline)
    try:
        return await asyncio.wait_for(
            asyncio.shield(saved), None if left is None else left + OPENING_GRACE_S
        )
    except TimeoutError:
        return None
    except Exception as exc:  # a lookup is best-effort: the answer goes on without it
        log.warning("slack.memory_lookup_failed", exc_info=exc)
        return None


async def _apologise(reply: SlackReplyStream, apology: str) -> None:
    """Show the apology; if even that fails (Slack down), the log line is all we can do."""
    try:
        await reply.fail(apology)
    except Exception as exc:
        log.error("slack.apology_failed", exc_info=exc)
