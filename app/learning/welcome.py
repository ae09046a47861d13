"""How Orion greets an owner back: their profile's `welcome`, written by each turn end's summary, so
a thread start never waits for a model (docs/architecture.md, "A turn's requests")."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from app.learning.profile import Profile
from app.learning.summary_file import Summary
from app.learning.timestamps import format_time, parse_time
from app.memory.scopes import is_thread_ts

SECTION = "welcome"


@dataclass(frozen=True)
class Welcome:
    thread_ts: str
    topic: str  # the conversation's title
    updated: datetime
    greeting: str | None = None  # written by the model, in the person's language
    next_step: str | None = None  # likewise: a suggestion to continue, for a prompt
    summary: Summary | None = None  # the conversation's newest summary

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "thread": self.thread_ts,
            "topic": self.topic,
            "updated": format_time(self.updated),
        }
        if self.greeting:
            data["greeting"] = self.greeting
        if self.next_step:
            data["next_step"] = self.next_step
        if self.summary is not None:
            data["summary"] = self.summary.to_json()
        return data

    def fresh(self, now: datetime, retention_days: int) -> bool:
        return now - self.updated <= timedelta(days=retention_days)


def welcome_of(profile: Profile) -> Welcome | None:
    """The profile's welcome; None when there is none or it cannot be read."""
    data = profile.section(SECTION)
    if not isinstance(data, dict):
        return None
    thread, topic, moment = data.get("thread"), data.get("topic"), parse_time(data.get("updated"))
    if not (is_thread_ts(thread) and isinstance(topic, str)) or moment is None:
        return None
    return Welcome(
        thread_ts=str(thread),
        topic=topic,
        updated=moment,
        greeting=_text(data.get("greeting")),
        next_step=_text(data.get("next_step")),
        summary=Summary.parse(data.get("summary")),
    )


def with_welcome(profile: Profile, welcome: Welcome) -> Profile:
    """The latest conversation wins."""
    return profile.with_section(SECTION, welcome.to_json())


def without_welcome(profile: Profile, *, thread_ts: str | None = None) -> Profile:
    """The profile without its welcome (`thread_ts`: only one back to that
    conversation). Its summary stays for the conversation (only the greeting, written
    from everything Orion knew, goes) — unless the conversation itself is forgotten."""
    welcome = welcome_of(profile)
    if welcome is None or (thread_ts is not None and welcome.thread_ts != thread_ts):
        return profile
    if thread_ts is None and welcome.summary is not None:
        kept = replace(welcome, greeting=None, next_step=None)
        return profile.with_section(SECTION, kept.to_json())
    return profile.with_section(SECTION, None)


def freshest_summary(
    profile: Profile, thread_ts: str, kept: Summary | None, *, cutoff: datetime | None
) -> Summary | None:
    """The newer of the conversation's own summary (`kept`) and the one its last turn end
    left in the profile — unless that one is older than `cutoff` (the retention window):
    it is as old as the conversation, which expired with it."""
    welcome = welcome_of(profile)
    newer = welcome.summary if welcome is not None and welcome.thread_ts == thread_ts else None
    if newer is not None and cutoff is not None and newer.updated < cutoff:
        newer = None
    if newer is None or (kept is not None and kept.updated > newer.updated):
        return kept
    return newer


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None
