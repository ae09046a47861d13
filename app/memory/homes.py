"""Where each owner's objects live: one home per person, channel and workspace, keyed by ids
checked against Slack's shapes (docs/architecture.md, "Memory layout: one home per owner")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from app.memory.key_prefixes import CHANNELS, PEOPLE, WORKSPACE
from app.memory.scopes import (
    THREAD_TS_PATTERN,
    is_undo_id,
    validate_channel,
    validate_thread_ts,
    validate_user_id,
)

OwnerKind = Literal["person", "channel"]


@dataclass(frozen=True, slots=True)
class Home:
    """One owner (a person or a channel) and the keys of its objects."""

    kind: OwnerKind
    id: str

    def __post_init__(self) -> None:
        if self.kind == "person":
            validate_user_id(self.id)
        elif self.kind == "channel":
            validate_channel(self.id)
        else:
            raise ValueError(f"not a kind of owner: {self.kind!r}")

    @property
    def prefix(self) -> str:
        top = PEOPLE.prefix if self.kind == "person" else CHANNELS.prefix
        return f"{top}{self.id}/"

    @property
    def profile_key(self) -> str:
        return self.prefix + "profile.json"

    @property
    def memory_prefix(self) -> str:
        """The owner's memory, as Claude's memory tool reaches it."""
        return self.prefix + "memory/"

    @property
    def conversations_prefix(self) -> str:
        return self.prefix + "conversations/"

    def conversation_key(self, thread_ts: str) -> str:
        return f"{self.conversations_prefix}{thread_name(thread_ts)}.json"

    def notes_prefix(self, thread_ts: str) -> str:
        """The conversation's notes (`/memories/sessions/{thread}/` to the model)."""
        return f"{self.conversations_prefix}{thread_name(thread_ts)}/"

    @property
    def search_key(self) -> str:
        return self.prefix + "search.json"

    @property
    def settings_key(self) -> str:
        """A person's choices (how Orion behaves with them), kept until forgotten."""
        return self.prefix + "settings.json"

    @property
    def channel_threads_prefix(self) -> str:
        """A person's channel threads holding their words: one empty object each, so the
        list has no cap and a turn's note of one carries nothing else."""
        return self.prefix + "channel-threads/"

    def channel_thread_key(self, channel_id: str, thread_ts: str) -> str:
        name = thread_name(thread_ts)
        return f"{self.channel_threads_prefix}{validate_channel(channel_id)}/{name}"

    def undo_key(self, undo_id: str) -> str:
        if not is_undo_id(undo_id):
            raise ValueError("not an undo id")
        return f"{self.prefix}undo/{undo_id}.json"

    @property
    def archived_prefix(self) -> str:
        """Where an archived channel's memory waits out the retention window."""
        return self.prefix + "archived/"


def person(user_id: str) -> Home:
    return Home("person", user_id)


def channel(channel_id: str) -> Home:
    return Home("channel", channel_id)


def preferences_key(user_id: str) -> str:
    """The person's preferences (`/memories/users/{user}/preferences.json`)."""
    return person(user_id).memory_prefix + "preferences.json"


def workspace_channels_key() -> str:
    """What the workspace's admins chose for channels, and its public channels."""
    return f"{WORKSPACE.prefix}channels.json"


def thread_name(thread_ts: str) -> str:
    # '.' would make the name look like a file extension.
    return validate_thread_ts(thread_ts).replace(".", "-")


_THREAD_TS = re.compile(THREAD_TS_PATTERN)


def thread_of_name(name: str) -> str | None:
    """The thread a key segment names (`1712-345` → `1712.345`), else None."""
    thread = name.replace("-", ".", 1)
    return thread if _THREAD_TS.fullmatch(thread) else None


# What expires with the retention window within any home (docs/operations.md's lifecycle
# table): a person's profile is all about conversations, but a channel's holds what its
# admins chose, and stays; memory and settings are kept until forgotten.
_EXPIRING = re.compile(
    r"(?:people|channels)/(?:teams/[^/]+/[^/]+/)?[^/]+/"
    r"(?:(?:conversations|undo|archived)/|search\.json$)"
    r"|people/(?:teams/[^/]+/[^/]+/)?[^/]+/profile\.json$"
)


def expires_with_conversations(key: str) -> bool:
    return _EXPIRING.match(key) is not None
