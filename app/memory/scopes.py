"""The memory paths one conversation may touch (docs/interface.md, "The memory tool") and the ids
they are made of. What the model sends is hostile until `to_key` accepted it."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TypeGuard

from app.memory.key_prefixes import GLOBAL

MEMORY_ROOT = "/memories"
# Generous for real names, small enough to keep keys far below GCS's 1024-byte limit.
MAX_PATH_LENGTH = 512
# Room, within Cloud Storage's 1,024 bytes a name, for the owner's home and a workspace's keys.
_MAX_KEY_BYTES = 900
# A file system's longest name (MEMORY_DIR): past it, a write fails as if storage were down.
_MAX_NAME_BYTES = 255

# Slack user ids: `U…` (and `W…` on Enterprise Grid), upper-case letters and digits.
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,30}")
# Slack message timestamps: seconds '.' microseconds, e.g. 1712345678.123456.
THREAD_TS_PATTERN = r"[0-9]{1,20}\.[0-9]{1,20}"
_THREAD_TS = re.compile(THREAD_TS_PATTERN)
# A percent-escape (`%2e`, `%2F`, `%25`...): some layer may decode it later, so refuse it.
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def is_user_id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and _USER_ID.fullmatch(value) is not None


def validate_user_id(user_id: str) -> str:
    if not isinstance(user_id, str) or not _USER_ID.fullmatch(user_id):
        raise ValueError(f"not a Slack user id: {user_id!r}")
    return user_id


def is_thread_ts(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and _THREAD_TS.fullmatch(value) is not None


def validate_thread_ts(thread_ts: str) -> str:
    if not is_thread_ts(thread_ts):
        raise ValueError(f"not a Slack thread timestamp: {thread_ts!r}")
    return thread_ts


def global_context_key() -> str:
    return f"{GLOBAL.prefix}context.md"


def to_memory_path(key: str) -> str:
    """The path the model uses for `key` (`""` is the memory root itself)."""
    return f"{MEMORY_ROOT}/{key}" if key else MEMORY_ROOT


def to_key(memory_path: str) -> str:
    """Map `/memories/X` to key `X` (`/memories` and `/memories/` to `""`), a trailing `/`
    dropped (models write directories that way); ValueError, with a reason the model can act
    on, for anything else."""
    if not isinstance(memory_path, str):
        raise ValueError(f"Path must be a string, got: {type(memory_path).__name__}")
    if len(memory_path) > MAX_PATH_LENGTH:
        raise ValueError(f"Path is longer than {MAX_PATH_LENGTH} characters")
    if any(unicodedata.category(char).startswith("C") for char in memory_path):
        # Cc control characters, Cf invisible/bidi formatting, Cs lone surrogates, Co, Cn.
        raise ValueError(f"Path {memory_path!r} contains control or invisible characters")
    if not memory_path.startswith(MEMORY_ROOT):
        raise ValueError(f"Path must start with {MEMORY_ROOT}, got: {memory_path}")
    if memory_path in (MEMORY_ROOT, f"{MEMORY_ROOT}/"):
        return ""
    if not memory_path.startswith(f"{MEMORY_ROOT}/"):
        # `/memoriesX` starts with the right letters but names a different directory.
        raise ValueError(
            f"Path must be {MEMORY_ROOT} or start with {MEMORY_ROOT}/, got: {memory_path}"
        )
    key = memory_path[len(MEMORY_ROOT) + 1 :]
    if key.endswith("/"):
        key = key[:-1]
    _check_segments(memory_path, key)
    if len(key.encode("utf-8")) > _MAX_KEY_BYTES:
        raise ValueError(f"Path is longer than {_MAX_KEY_BYTES} bytes")
    return key


def _check_segments(memory_path: str, key: str) -> None:
    if "\\" in key:
        raise ValueError(f"Path {memory_path} must use '/' separators, not backslashes")
    if _PERCENT_ESCAPE.search(key):
        raise ValueError(f"Path {memory_path} must not contain percent-encoded characters")
    for segment in key.split("/"):
        if not segment:
            raise ValueError(f"Path {memory_path} contains an empty segment ('//')")
        if len(segment.encode("utf-8")) > _MAX_NAME_BYTES:
            raise ValueError(f"A name in the path is longer than {_MAX_NAME_BYTES} bytes")
        # NFKC folds look-alikes such as '．．' or '／' to '..' and '/': a later layer
        # (a file system, a URL decoder, a human) might do the same.
        folded = unicodedata.normalize("NFKC", segment)
        if segment.startswith(".") or folded.startswith("."):
            if segment.strip(".") == "" or folded.strip(".") == "":
                raise ValueError(f"Path {memory_path} must not contain '.' or '..' segments")
            raise ValueError(f"Path {memory_path} must not contain hidden names starting with '.'")
        if "/" in folded or "\\" in folded:
            raise ValueError(f"Path {memory_path} contains a character that looks like a separator")


class ScopeRules:
    """Which keys one conversation may read and write (`roots`, `writable_roots`: prefixes ending in
    '/'), for keys from `to_key`, which leaves nothing that could make a prefix comparison lie."""

    __slots__ = ()

    @property
    def roots(self) -> tuple[str, ...]:
        """Every readable directory, as a key prefix ending in '/'."""
        raise NotImplementedError

    @property
    def writable_roots(self) -> tuple[str, ...]:
        raise NotImplementedError

    def root_of(self, key: str) -> str | None:
        """The readable root that holds `key` (or is `key`), if any."""
        for root in self.roots:
            if key.startswith(root) or f"{key}/" == root:
                return root
        return None

    def is_root(self, key: str) -> bool:
        """True for the key of a root directory itself (`global`, `users/U1`...)."""
        return f"{key}/" in self.roots

    def can_read(self, key: str) -> bool:
        return self.root_of(key) is not None

    def can_write(self, key: str) -> bool:
        """True for keys strictly inside a writable root (never the root itself)."""
        return any(key.startswith(root) and len(key) > len(root) for root in self.writable_roots)

    def is_writable_root(self, key: str) -> bool:
        return f"{key}/" in self.writable_roots

    def roots_under(self, directory: str) -> list[str]:
        """The readable roots inside `directory` when it lies above them (`""`, `users`...):
        shared by everybody, so a listing of them shows only these roots."""
        if directory == "":
            return list(self.roots)
        return [
            root
            for root in self.roots
            if root.startswith(f"{directory}/") and root != f"{directory}/"
        ]


@dataclass(frozen=True, slots=True)
class MemoryScope(ScopeRules):
    """The memory one conversation (user `user_id` in thread `thread_ts`) may use: reads
    `global/`, `users/{user_id}/` and `sessions/{thread}/`, writes the last two."""

    user_id: str
    thread_ts: str

    def __post_init__(self) -> None:
        validate_user_id(self.user_id)
        validate_thread_ts(self.thread_ts)

    @property
    def user_root(self) -> str:
        return f"users/{self.user_id}/"

    @property
    def session_root(self) -> str:
        return f"sessions/{self.thread_ts.replace('.', '-')}/"

    @property
    def roots(self) -> tuple[str, ...]:
        return (GLOBAL.prefix, self.user_root, self.session_root)

    @property
    def writable_roots(self) -> tuple[str, ...]:
        return (self.user_root, self.session_root)


@dataclass(frozen=True, slots=True)
class ChannelMemoryScope(ScopeRules):
    """The memory a conversation in channel `channel_id` may use: `global/` (read-only) and the
    channel's own directory, `channels/{channel_id}/` (stored as its home's `memory/`). Nobody's
    personal memory (`users/`, `sessions/`), and no other channel's: whoever is talking there."""

    channel_id: str

    def __post_init__(self) -> None:
        validate_channel(self.channel_id)

    @property
    def channel_root(self) -> str:
        return f"channels/{self.channel_id}/"

    @property
    def roots(self) -> tuple[str, ...]:
        return (GLOBAL.prefix, self.channel_root)

    @property
    def writable_roots(self) -> tuple[str, ...]:
        return (self.channel_root,)


# Slack channel ids: `C…` (channels), `D…` (DMs, where assistant threads live), `G…`.
_CHANNEL_ID = re.compile(r"[CDG][A-Z0-9]{2,30}")


def is_channel_id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and _CHANNEL_ID.fullmatch(value) is not None


def is_shared_channel_id(value: object) -> bool:
    """A public or private channel's id (`C…`, or `G…` for private channels made before
    2021): never a DM's (`D…`)."""
    return is_channel_id(value) and not str(value).startswith("D")


def validate_channel(channel_id: str) -> str:
    """A channel's id, for the keys of its memory: a DM is never a channel."""
    if not is_shared_channel_id(channel_id):
        raise ValueError(f"not a Slack channel id: {channel_id!r}")
    return channel_id


_UNDO_ID = re.compile(r"[0-9a-f]{32}")


def is_undo_id(value: object) -> bool:
    return isinstance(value, str) and _UNDO_ID.fullmatch(value) is not None
