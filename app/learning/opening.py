"""What an event starts from (its owner's memory, read at once within one budget): whether it may
continue the conversation, the memory block and its erasure guard. Without the profile and the
conversation in time nothing is kept: nothing else says whose it is, or whether it was erased."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.learning.conversation_record import ConversationOwner
from app.learning.conversations import OpenedConversation, TurnTranscript, opened_from
from app.learning.guard import Guard
from app.learning.profile import Profile
from app.learning.summary_file import Summary
from app.learning.welcome import freshest_summary
from app.memory.formatting import MemorySections, format_memory_context
from app.memory.homes import preferences_key
from app.memory.loader import LoadedMemories, Scope, load_memories
from app.memory.preferences_file import shaping_preferences
from app.memory.retention import cutoff_of
from app.memory.scopes import global_context_key
from app.observability.logging import get_logger
from app.storage.deadline import time_left
from app.storage.store import NOT_READ, NotRead, ObjectStore, StoredObject

log = get_logger(__name__)


@dataclass(frozen=True)
class Opening:
    """One event's owner state, as read."""

    owner: ConversationOwner
    thread_ts: str
    loaded: LoadedMemories
    store: ObjectStore
    # None: not asked for (a thread start), or storage did not say in time.
    conversation: OpenedConversation | None
    # None when the profile did not arrive in time: then nothing is kept.
    guard: Guard | None
    context: str | None  # the memory block for the prompt
    summary: Summary | None  # the conversation's freshest summary (app/learning/welcome.py)

    @property
    def profile(self) -> Profile:
        return self.guard.profile if self.guard is not None else Profile()

    @property
    def refused(self) -> bool:
        return self.conversation is not None and not self.conversation.allowed

    @property
    def remembers(self) -> bool:
        """Whether the event may keep what it learns: its conversation and profile
        answered, and the conversation is the owner's."""
        return (
            self.guard is not None
            and self.guard.readable
            and self.conversation is not None
            and self.conversation.allowed
        )

    def transcript(self) -> TurnTranscript | None:
        """Where the event writes what was said; None when it may keep nothing."""
        if not self.remembers:
            return None
        assert self.guard is not None and self.conversation is not None  # remembers
        return TurnTranscript(
            self.guard.store, self.owner, self.thread_ts, self.conversation, summary=self.summary
        )

    @property
    def preferences(self) -> StoredObject | NotRead | None:
        """The person's preferences as read (for an update that starts from them)."""
        if self.loaded.answered(Scope.USER):
            return self.loaded.read(Scope.USER)
        return NOT_READ

    @property
    def complete(self) -> bool:
        return self.loaded.complete


async def open_event(
    store: ObjectStore,
    owner: ConversationOwner,
    thread_ts: str,
    *,
    budget_s: float,
    token_budget: int,
    conversation: bool = True,
    since: datetime | None = None,
) -> Opening:
    """Read `owner`'s state for an event in `thread_ts` (`conversation`: the conversation and shared
    context too) within the storage deadline, else `budget_s`; `since`: when the event began."""
    if (left := time_left()) is not None:
        budget_s = left
    home = owner.home
    keys = {Scope.USER: preferences_key(owner.user), Scope.PROFILE: home.profile_key}
    if conversation:
        # A thread start greets from the profile and preferences alone.
        keys[Scope.GLOBAL] = global_context_key()
        keys[Scope.CONVERSATION] = home.conversation_key(thread_ts)
    loaded = await load_memories(store, keys, budget_s=budget_s)
    opened = (
        opened_from(loaded.read(Scope.CONVERSATION), owner)
        if conversation and loaded.answered(Scope.CONVERSATION)
        else None
    )
    guard = (
        Guard(store, home, loaded.read(Scope.PROFILE), since=since)
        if loaded.answered(Scope.PROFILE)
        else None
    )
    profile = guard.profile if guard is not None else Profile()
    record = opened.record if opened is not None else None
    preferences = loaded.content(Scope.USER)
    if owner.in_channel:
        # Of the person's own memory, only how they like answers is used in a channel.
        preferences = shaping_preferences(preferences)
    summary = freshest_summary(
        profile, thread_ts, record.summary if record else None, cutoff=cutoff_of(store)
    )
    context = format_memory_context(
        MemorySections(
            preferences=preferences,
            global_context=loaded.content(Scope.GLOBAL),
            session_summary=summary.body if summary is not None else None,
        ),
        token_budget=token_budget,
    )
    opening = Opening(owner, thread_ts, loaded, store, opened, guard, context, summary)
    if conversation and not opening.remembers and not opening.refused:
        log.warning(
            "memory.without_memory",
            reason="timed out"
            if loaded.timed_out
            else "profile unreadable"
            if guard is not None and not guard.readable
            else "storage failed",
            scopes=[s.value for s in (*loaded.timed_out, *loaded.failed)],
        )
    return opening
