"""The memory layout as tests seed and read it: each owner's objects in their home
(app/memory/homes.py), made and parsed with Orion's own types, so that a test states what
a person has ("a conversation about Q3 with this summary") rather than how it is encoded.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from app.learning.conversation_record import (
    ConversationOwner,
    ConversationRecord,
    TranscriptMessage,
    said,
)
from app.learning.conversations import OpenedConversation, opened_from
from app.learning.person_settings import channel_threads
from app.learning.profile import ConversationEntry, Profile
from app.learning.search_index import document_for, with_documents
from app.learning.summary_file import Summary
from app.learning.welcome import SECTION as WELCOME
from app.learning.welcome import Welcome, welcome_of
from app.memory.homes import Home, channel, person, preferences_key
from app.storage.store import ObjectStore

__all__ = [
    "channel",
    "conversation",
    "conversation_key",
    "conversation_record",
    "history",
    "messages_in",
    "open_conversation",
    "person",
    "preferences_key",
    "profile",
    "profile_of",
    "summary_in",
    "summary_of_latest",
    "welcome_in",
]


async def open_conversation(
    store: ObjectStore, owner: ConversationOwner, thread_ts: str
) -> OpenedConversation:
    """Where `owner`'s event stands with thread `thread_ts`, as a turn opens it."""
    return opened_from(await store.read(owner.home.conversation_key(thread_ts)), owner)


def conversation_key(user: str, thread_ts: str) -> str:
    """Where a person's conversation in a DM lives."""
    return person(user).conversation_key(thread_ts)


def conversation(user: str, thread_ts: str, **fields: Any) -> str:
    """A conversation object as Orion writes it (`conversation_record`'s, rendered)."""
    return conversation_record(user, thread_ts, **fields).render()


def conversation_record(
    user: str,
    thread_ts: str,
    *,
    channel_id: str = "D0TEST",
    summary: str | None = None,
    title: str = "An earlier conversation",
    messages: Sequence[tuple[str, str]] = (),
    at: datetime | None = None,
    in_channel: bool = False,
    context: dict[str, str] | None = None,
) -> ConversationRecord:
    """A conversation object as Orion's type: `messages` as (role, text) pairs, said at
    `at` (now by default), with a summary when `summary` is given, and Slack's `context`
    of the thread."""
    moment = at or datetime.now(UTC)
    owner = ConversationOwner(user, channel_id, kind="channel" if in_channel else "person")
    said_messages: list[TranscriptMessage] = [
        said(role, text, at=moment, user=user if in_channel and role == "user" else None)  # type: ignore[arg-type]
        for role, text in messages
    ]
    record = ConversationRecord(thread_ts, owner, moment, context=context).with_messages(
        said_messages
    )
    if summary is not None:
        record = record.with_summary(Summary(title, summary, moment))
    return record


def history(records: Sequence[ConversationRecord]) -> dict[str, str]:
    """An owner's past conversations as their turn ends left them (key → content): each
    conversation's object, the owner's profile listing them, and the search index over
    them (title, summary and transcript). All of `records` are one owner's."""
    homes = {record.owner.home for record in records}
    assert len(homes) == 1, "one owner's conversations"
    [home] = homes
    objects: dict[str, str] = {}
    result, documents = Profile(), []
    for record in records:
        objects[home.conversation_key(record.thread_ts)] = record.render()
        title = record.summary.title if record.summary is not None else ""
        body = record.summary.body if record.summary is not None else ""
        moments = [m.at for m in record.messages]
        if record.summary is not None:
            moments.append(record.summary.updated)
        updated = max(moments, default=record.started)
        channel_id = record.owner.channel
        result = result.with_conversation(
            ConversationEntry(record.thread_ts, title, updated, channel_id)
        )
        documents.append(
            document_for(
                record.thread_ts,
                title,
                body,
                record.messages,
                updated,
                record.started,
                channel_id,
            )
        )
    objects[home.profile_key] = result.render()
    objects[home.search_key] = with_documents(None, documents)
    return objects


def profile(
    *,
    conversations: Sequence[tuple[str, str]] = (),
    channel_id: str = "D0TEST",
    welcome: Welcome | None = None,
    at: datetime | None = None,
    settings: dict[str, bool] | None = None,
    erased_at: datetime | None = None,
) -> str:
    """A profile as Orion writes it: `conversations` as (thread, title) pairs, newest last."""
    moment = at or datetime.now(UTC)
    result = Profile(erased_at=erased_at)
    for thread_ts, title in conversations:
        result = result.with_conversation(ConversationEntry(thread_ts, title, moment, channel_id))
    if welcome is not None:
        result = result.with_section(WELCOME, welcome.to_json())
    if settings is not None:
        result = result.with_section("settings", settings)
    return result.render()


def said_in_of(names: Iterable[str], user: str) -> set[tuple[str, str]]:
    """The channel threads noted in the person's home (among the bucket's `names`) as
    holding their words."""
    return channel_threads(person(user), names, None)


def profile_of(content: str | None) -> Profile:
    return Profile.parse(content)


def summary_in(content: str | None) -> str | None:
    """The summary a conversation object holds (its body), if any."""
    record = ConversationRecord.parse(content) if content is not None else None
    return record.summary.body if record is not None and record.summary is not None else None


def summary_of_latest(profile_content: str | None) -> str | None:
    """The newest summary of the owner's latest conversation: made at its last turn end,
    it waits in the profile's welcome until the conversation's next turn writes it into the
    conversation's own object (app/learning/welcome.py)."""
    welcome = welcome_of(Profile.parse(profile_content))
    return welcome.summary.body if welcome is not None and welcome.summary is not None else None


def messages_in(content: str | None) -> list[str]:
    """What a conversation object's transcript holds, as texts, oldest first."""
    record = ConversationRecord.parse(content) if content is not None else None
    return [m.text for m in record.messages] if record is not None else []


def home_of(user: str) -> Home:
    return person(user)


def welcome_in(profile_content: str | None) -> Welcome | None:
    """The welcome back a profile holds, if any."""
    return welcome_of(Profile.parse(profile_content))
