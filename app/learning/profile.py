"""An owner's profile (`{home}/profile.json`), read by each of their events and written at most once
by each, through their erasure guard (docs/architecture.md, "Two records")."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from app.learning.timestamps import format_time, parse_moment, parse_time
from app.memory.scopes import is_thread_ts, validate_thread_ts
from app.memory.tolerant_json import load_json_object, object_to_update, unreadable

VERSION = 2
MAX_CONVERSATIONS = 1_000  # within the retention window; the Home tab shows the newest
MAX_FORGOTTEN = 1_000
MAX_CHANGES = 100


@dataclass(frozen=True)
class ConversationEntry:
    """One of the owner's conversations, as their profile lists it."""

    thread_ts: str
    title: str
    updated: datetime
    channel: str | None = None  # the DM (or channel) it is in

    def to_json(self) -> dict[str, str]:
        item = {"thread": self.thread_ts, "title": self.title, "updated": format_time(self.updated)}
        if self.channel:
            item["channel"] = self.channel
        return item

    @staticmethod
    def parse(item: object) -> ConversationEntry | None:
        if not isinstance(item, dict):
            return None
        thread, title, channel = item.get("thread"), item.get("title"), item.get("channel")
        moment = parse_time(item.get("updated"))
        if not (is_thread_ts(thread) and isinstance(title, str)) or moment is None:
            return None
        return ConversationEntry(
            thread, title, moment, channel if isinstance(channel, str) else None
        )


@dataclass(frozen=True)
class Profile:
    """An owner's profile as read (empty when there is none)."""

    erased_at: datetime | None = None
    forgotten: dict[str, datetime] = field(default_factory=dict)
    conversations: tuple[ConversationEntry, ...] = ()
    # The sections of other modules, as stored (each parses its own: welcome.py,
    # channel_memory.py): kept as they are by every other writer.
    sections: dict[str, Any] = field(default_factory=dict)

    # -- the erasure guard's view (app/learning/guard.py) --

    def erased_since(self, earlier: Profile) -> bool:
        """Whether the owner was forgotten after `earlier` was read."""
        return self.erased_at is not None and self.erased_at != earlier.erased_at

    def forgot_since(self, earlier: Profile, thread_ts: str) -> bool:
        """Whether the conversation was forgotten after `earlier` was read."""
        when = self.forgotten.get(thread_ts)
        return when is not None and when != earlier.forgotten.get(thread_ts)

    # -- the owner's conversations --

    def entry(self, thread_ts: str) -> ConversationEntry | None:
        return next((e for e in self.conversations if e.thread_ts == thread_ts), None)

    def with_conversation(self, entry: ConversationEntry) -> Profile:
        others = [e for e in self.conversations if e.thread_ts != entry.thread_ts]
        listed = sorted([entry, *others], key=lambda e: e.updated, reverse=True)
        return replace(self, conversations=tuple(listed[:MAX_CONVERSATIONS]))

    def forgetting(self, thread_ts: str, moment: datetime) -> Profile:
        """The profile once the conversation is forgotten: not listed, and the moment
        kept, so that a turn still writing to it takes its writes back."""
        validate_thread_ts(thread_ts)
        return replace(
            self,
            conversations=tuple(e for e in self.conversations if e.thread_ts != thread_ts),
            forgotten={**self.forgotten, thread_ts: moment},
        )

    # -- other modules' sections --

    def section(self, name: str) -> Any:
        return self.sections.get(name)

    def with_section(self, name: str, value: Any) -> Profile:
        sections = {k: v for k, v in self.sections.items() if k != name}
        if value is not None:
            sections[name] = value
        return replace(self, sections=sections)

    def render(self, *, cutoff: datetime | None = None) -> str:
        """The profile as stored, without what is older than `cutoff`."""
        data: dict[str, Any] = {"version": VERSION}
        if self.erased_at is not None:
            data["erased_at"] = self.erased_at.isoformat()
        forgotten = sorted(self.forgotten.items(), key=lambda item: item[1], reverse=True)
        kept = [(t, at) for t, at in forgotten if cutoff is None or at >= cutoff]
        if kept:
            data["forgotten"] = {t: at.isoformat() for t, at in kept[:MAX_FORGOTTEN]}
        entries = [e for e in self.conversations if cutoff is None or e.updated >= cutoff]
        if entries:
            data["conversations"] = [e.to_json() for e in entries]
        data.update(self.sections)
        return json.dumps(data, ensure_ascii=False)

    @staticmethod
    def parse(content: str | None, *, cutoff: datetime | None = None) -> Profile:
        """The profile, for a reader; empty when there is none or it cannot be read
        (logged), never an error. What is older than `cutoff` is left out."""
        return Profile._of(load_json_object(content, what="profile"), cutoff)

    @staticmethod
    def to_update(content: str | None) -> Profile:
        """The profile for a writer that will write it back (empty when none). Raises `Unreadable`
        for one that cannot be read whole: written over, what was forgotten could come back."""
        data = object_to_update(content, what="profile")
        profile, forgotten = Profile._of(data, None), data.get("forgotten", {})
        # Every erasure mark of `data` kept in `profile`?
        if (profile.erased_at is None) != (data.get("erased_at") is None) or not (
            isinstance(forgotten, dict) and len(profile.forgotten) == len(forgotten)
        ):
            raise unreadable("profile", content)
        return profile

    @staticmethod
    def _of(data: dict[str, Any], cutoff: datetime | None) -> Profile:
        items, forgotten = data.get("conversations"), data.get("forgotten")
        listed: dict[str, ConversationEntry] = {}
        for item in items if isinstance(items, list) else ():
            entry = ConversationEntry.parse(item)
            if entry is None or (cutoff is not None and entry.updated < cutoff):
                continue
            if entry.thread_ts not in listed or listed[entry.thread_ts].updated < entry.updated:
                listed[entry.thread_ts] = entry
        return Profile(
            erased_at=parse_moment(data.get("erased_at")),
            forgotten={
                thread: moment
                for thread, at in (forgotten.items() if isinstance(forgotten, dict) else ())
                if is_thread_ts(thread) and (moment := parse_moment(at)) is not None
            },
            conversations=tuple(
                sorted(listed.values(), key=lambda e: e.updated, reverse=True)[:MAX_CONVERSATIONS]
            ),
            sections={k: v for k, v in data.items() if k not in _OWN},
        )


_OWN = frozenset({"version", "erased_at", "forgotten", "conversations"})
