"""One terminal conversation with the agent: its greeting, its history, the learning after
each turn, and where anything about the person was written."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.config import refused_setting
from app.learning.conversation_record import ConversationOwner, said
from app.learning.opening import Opening, open_event
from app.learning.undo import UndoResult, undo_changes
from app.memory.change_log import ChangeLog
from app.memory.homes import person
from app.observability.logging import get_logger
from app.services import Services, build_services, build_storage, upgrade_in_background, whole_store

if TYPE_CHECKING:
    from app.agent.history import ThreadMessage
    from app.agent.memory_notes import MemoryNote
    from app.agent.reply_sink import ReplySink
    from app.config import Settings
    from app.storage.store import ObjectStore

log = get_logger(__name__)

CHANNEL = "D0TERMINAL"  # a pretend DM: thread contexts and links need a channel id


@dataclass(frozen=True)
class Folder:
    """A folder of the store that holds something about the person, as they can find it."""

    location: str  # gs://bucket/people/U…/memory/, or the absolute path of the local folder
    holds: str  # what it holds, in a few words


class SettingRefused(Exception):
    """Claude refused what every turn sends — the key (401, or 403 for a key without
    access), or the model (404) — so nothing else can work: the chat ends naming the
    setting to fix (`problem`, in problem_report's shape)."""

    def __init__(self, problem: str, status: int, error_type: str) -> None:
        super().__init__(f"{status} {error_type}")
        self.problem = problem
        self.status = status
        self.error_type = error_type


class Conversation:
    def __init__(
        self, settings: Settings, user_id: str, services: Services, *, thread_ts: str
    ) -> None:
        self.settings = settings
        self.user_id = user_id
        self._services = services
        self.thread_ts = thread_ts
        self._history: list[ThreadMessage] = []
        self._learning: list[asyncio.Task[None]] = []
        self._before: dict[str, int] = {}
        # The note of the last answer (what it changed in memory), and its undo: `/undo`
        # is the button under that answer, never under an earlier one.
        self.last_note: MemoryNote | None = None

    @classmethod
    async def start(cls, settings: Settings, user_id: str) -> Conversation:
        """Raises what the store raises when it cannot be used (no credentials, no such
        bucket, no answer): the chat then stops with one line (console.py)."""
        storage = build_storage(settings)
        thread_ts = new_thread_ts()
        try:
            await storage.store.connect()
            # Asked before the Claude SDK is imported (seconds): a bucket that cannot be
            # used is said at once.
            before = await _kept(storage.store, person(user_id).prefix)
            if storage.memory_store is not None:
                # As every start of Orion does: what an earlier Orion wrote, moved home.
                await upgrade_in_background(whole_store(storage, settings))
            services = await asyncio.to_thread(build_services, settings, storage)
        except BaseException:
            await storage.store.close()
            raise
        conversation = cls(settings, user_id, services, thread_ts=thread_ts)
        conversation._before = before
        return conversation

    async def answer(self, text: str, reply: ReplySink) -> str:
        """Answer `text`, streaming to `reply`. Raises SettingRefused, or whatever else stopped
        the turn (a stopped turn, cancelled, is forgotten: neither it nor its question stays
        in the history)."""
        from app.agent.exchange import Exchange
        from app.agent.history import ThreadMessage
        from app.agent.request import TurnRequest

        self.last_note = None
        opening = await self._open()
        history = [*self._history, ThreadMessage("user", text)]
        turn = Exchange(self._services.agent, self._learn)
        transcript = opening.transcript() if opening is not None else None
        if transcript is not None:
            transcript.add(said("user", text, at=turn.began))
        request = TurnRequest(
            user_id=self.user_id,
            channel_id=CHANNEL,
            thread_ts=self.thread_ts,
            history=history,
            text=text,
            opening=opening,
            changes=ChangeLog(),
        )
        turn.begin(request, transcript, text)
        try:
            result = await turn.agent.answer(request, reply)
        except BaseException as exc:
            turn.end(None)
            problem = refused_setting(exc, self.settings) if isinstance(exc, Exception) else None
            if problem is not None:
                kind = str(getattr(exc, "type", None) or "error")
                raise SettingRefused(problem, getattr(exc, "status_code", 0), kind) from exc
            raise
        if result.refused:
            # Nothing of a refused exchange is kept: the next would be refused too.
            turn.transcript = None
        else:
            self._history = [*history, ThreadMessage("assistant", result.text)]
            turn.keep_answer(result.text)
        turn.end(result.text)
        # The same note as under a Slack answer: what the store confirmed changing.
        self.last_note = await turn.note()
        return result.text

    async def _open(self, *, conversation: bool = True) -> Opening | None:
        """This person's state for the next turn, as a Slack message (or, `conversation`
        False, a thread start) reads it; None when memory is off."""
        store = self._services.storage.memory_store
        if store is None:
            return None
        return await open_event(
            store,
            ConversationOwner(self.user_id, CHANNEL),
            self.thread_ts,
            budget_s=self.settings.memory_load_timeout_s,
            token_budget=self.settings.memory_context_token_budget,
            conversation=conversation,
        )

    async def greeting(self) -> str:
        """What Slack's greeting would say to this person (app/slack/conversation/greeting.py):
        welcomed back to their last conversation, or with their preferences, when Orion
        knows them; the plain welcome otherwise, also when memory is off or unreadable."""
        from app.slack.conversation.greeting import greeting_of

        try:
            opening = await self._open(conversation=False)
        except Exception as exc:  # a greeting without memories, as in Slack
            log.warning("chat.greeting.memory_failed", exc_info=exc)
            opening = None
        return greeting_of(opening, self.settings.memory_session_retention_days).words

    async def undo_last(self) -> UndoResult | None:
        """Undo what the last answer changed in memory (`/undo`); None when it changed
        nothing that can be undone."""
        store = self._services.storage.memory_store
        undo = self.last_note.undo_id if self.last_note is not None else None
        if store is None or undo is None:
            return None
        return await undo_changes(store, undo, self.user_id)

    @property
    def learning(self) -> bool:
        """Whether what earlier turns taught Orion is still being saved."""
        return any(not task.done() for task in self._learning)

    async def finish_learning(self) -> None:
        await asyncio.gather(*self._learning, return_exceptions=True)

    async def close(self) -> None:
        for task in self._learning:
            task.cancel()
        await asyncio.gather(*self._learning, return_exceptions=True)
        await self._services.claude.close()
        await self._services.storage.store.close()

    async def folders_written(self) -> list[Folder]:
        """The folders where anything about the person changed since the conversation began: their
        memories, Orion's records of them. Empty when nothing changed (or memory is off)."""
        if self._services.storage.memory_store is None:
            return []  # memory off: nothing is kept
        try:
            now = await _kept(self._services.storage.store, person(self.user_id).prefix)
        except Exception as exc:  # the farewell then says nothing about memories
            log.warning("chat.memory_check.failed", exc_info=exc)
            return []
        changed = {
            key for key in now.keys() | self._before.keys() if now.get(key) != self._before.get(key)
        }
        home = person(self.user_id)
        # Each changed key counts for the first that holds it: the home holds all.
        folders = [
            (home.memory_prefix, "your memories: preferences and notes"),
            (home.prefix, "Orion's records of you: your conversations, how to greet you"),
        ]
        touched = {next(p for p, _ in folders if key.startswith(p)) for key in changed}
        bucket = self.settings.gcs_memories_bucket
        return [
            Folder(
                f"gs://{bucket}/{p}" if bucket else f"{self.settings.memory_dir.resolve() / p}/",
                holds,
            )
            for p, holds in folders
            if p in touched
        ]

    def _learn(self, work: Coroutine[Any, Any, None], *, name: str) -> asyncio.Future[None]:
        task = asyncio.create_task(work, name=name)
        self._learning.append(task)
        return task


async def _kept(store: ObjectStore, prefix: str) -> dict[str, int]:
    """Every object under `prefix`, with its generation (what changed shows by comparing)."""
    return {info.key: info.generation for info in await store.list(prefix)}


def new_thread_ts() -> str:
    """A conversation's own id, shaped as a Slack ts: its start's microsecond and six random digits
    (chats started at once never share one); at most twelve digits after the dot, never a card
    number."""
    micros = time.time_ns() // 1000
    return f"{micros // 1_000_000}.{micros % 1_000_000:06d}{secrets.randbelow(10**6):06d}"
