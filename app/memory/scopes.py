"""Where each memory lives, and which memory paths one conversation may touch.

Keys are the relative paths of the memory layout (docs/interface.md, "Memory layout"):

    global/context.md                  organisation-wide, read-only for the model
    users/{user_id}/preferences.json   one person's preferences (and other files)
    sessions/{thread_ts, '.'→'-'}/...  one assistant thread's summary and notes
    channels/{channel_id}/...          one channel's notes (decisions, conventions...)

(Every prefix of the store, Orion's own records included, is listed in key_prefixes.py.)
The model addresses them as `/memories/{key}`. Everything the model sends is hostile until
`to_key` accepted it: it rejects traversal (`..`, also percent-encoded or with
backslashes), look-alikes of `/memories`, empty and hidden segments and control
characters, so that the key it returns can be compared with plain string prefixes.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from app.memory.key_prefixes import (
    CHANNEL_RECORDS_PREFIX,
    CHANNEL_SETTINGS_PREFIX,
    CHANNELS_PREFIX,
    CONVERSATIONS_PREFIX,
    GLOBAL_PREFIX,
    PEOPLE_PREFIX,
    SESSIONS_PREFIX,
    SETTINGS_PREFIX,
    THREADS_PREFIX,
    UNDO_PREFIX,
    USERS_PREFIX,
)

MEMORY_ROOT = "/memories"
# Generous for real names, small enough to keep keys far below GCS's 1024-byte limit.
MAX_PATH_LENGTH = 512
_MAX_KEY_BYTES = 1024

# Slack user ids: `U…` (and `W…` on Enterprise Grid), upper-case letters and digits.
_USER_ID = re.compile(r"[UW][A-Z0-9]{2,30}")
# Slack message timestamps: seconds '.' microseconds, e.g. 1712345678.123456.
THREAD_TS_PATTERN = r"[0-9]{1,20}\.[0-9]{1,20}"
_THREAD_TS = re.compile(THREAD_TS_PATTERN)
# A percent-escape (`%2e`, `%2F`, `%25`...): some layer may decode it later, so refuse it.
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")


def is_user_id(value: object) -> bool:
    return isinstance(value, str) and _USER_ID.fullmatch(value) is not None


def validate_user_id(user_id: str) -> str:
    if not isinstance(user_id, str) or not _USER_ID.fullmatch(user_id):
        raise ValueError(f"not a Slack user id: {user_id!r}")
    return user_id


def is_thread_ts(value: object) -> bool:
    return isinstance(value, str) and _THREAD_TS.fullmatch(value) is not None


def validate_thread_ts(thread_ts: str) -> str:
    if not is_thread_ts(thread_ts):
        raise ValueError(f"not a Slack thread timestamp: {thread_ts!r}")
    return thread_ts


def global_context_key() -> str:
    return f"{GLOBAL_PREFIX}context.md"


def user_prefix(user_id: str) -> str:
    return f"{USERS_PREFIX}{validate_user_id(user_id)}/"


def user_preferences_key(user_id: str) -> str:
    return f"{user_prefix(user_id)}preferences.json"


def session_prefix(thread_ts: str) -> str:
    # '.' would make the directory name look like a file extension (and a hidden-ish name).
    return f"{SESSIONS_PREFIX}{validate_thread_ts(thread_ts).replace('.', '-')}/"


def session_context_key(thread_ts: str) -> str:
    return f"{session_prefix(thread_ts)}context.md"


_SESSION_CONTEXT_KEY = re.compile(
    re.escape(SESSIONS_PREFIX) + THREAD_TS_PATTERN.replace(r"\.", "-") + r"/context\.md"
)


def is_session_context_key(key: str) -> bool:
    """Whether `key` is a thread's summary (what `session_context_key` names)."""
    return _SESSION_CONTEXT_KEY.fullmatch(key) is not None


def to_memory_path(key: str) -> str:
    """The path the model uses for `key` (`""` is the memory root itself)."""
    return f"{MEMORY_ROOT}/{key}" if key else MEMORY_ROOT


def to_key(memory_path: str) -> str:
    """Map `/memories/X` to key `X` (`/memories` and `/memories/` to `""`).

    Raises ValueError, with a reason the model can act on, for anything else. A trailing
    `/` is accepted (models write directories that way) and dropped.
    """
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
    """Which keys one conversation may read and write, from its readable `roots` and its
    `writable_roots` (key prefixes ending in '/'). Keys must come from `to_key`, which
    guarantees there is nothing in them (no `..`, no empty segments) that could make a
    plain prefix comparison lie."""

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
        """The readable roots inside `directory` when it lies above them (`""`, `users`...).

        These directories are shared by everybody: listing them must show only these roots.
        """
        if directory == "":
            return list(self.roots)
        return [
            root
            for root in self.roots
            if root.startswith(f"{directory}/") and root != f"{directory}/"
        ]


@dataclass(frozen=True, slots=True)
class MemoryScope(ScopeRules):
    """The memory one conversation (user `user_id` in thread `thread_ts`) may use.

    Readable: `global/`, `users/{user_id}/`, `sessions/{thread}/`. Writable: the last two.
    """

    user_id: str
    thread_ts: str

    def __post_init__(self) -> None:
        validate_user_id(self.user_id)
        validate_thread_ts(self.thread_ts)

    @property
    def user_root(self) -> str:
        return user_prefix(self.user_id)

    @property
    def session_root(self) -> str:
        return session_prefix(self.thread_ts)

    @property
    def roots(self) -> tuple[str, ...]:
        return (GLOBAL_PREFIX, self.user_root, self.session_root)

    @property
    def writable_roots(self) -> tuple[str, ...]:
        return (self.user_root, self.session_root)


@dataclass(frozen=True, slots=True)
class ChannelMemoryScope(ScopeRules):
    """The memory a conversation in channel `channel_id` may use: `global/` (read-only)
    and the channel's own directory, `channels/{channel_id}/`. Nobody's personal memory
    (`users/`, `sessions/`), and no other channel's: whoever is talking there."""

    channel_id: str

    def __post_init__(self) -> None:
        validate_channel(self.channel_id)

    @property
    def channel_root(self) -> str:
        return channel_prefix(self.channel_id)

    @property
    def roots(self) -> tuple[str, ...]:
        return (GLOBAL_PREFIX, self.channel_root)

    @property
    def writable_roots(self) -> tuple[str, ...]:
        return (self.channel_root,)


# Slack channel ids: `C…` (channels), `D…` (DMs, where assistant threads live), `G…`.
_CHANNEL_ID = re.compile(r"[CDG][A-Z0-9]{2,30}")
# THREADS_PREFIX is outside every MemoryScope root: only Orion itself reads and writes
# thread contexts (they hold a copy of the memory restored at thread start, so forgetting a
# person reaches them). PEOPLE_PREFIX too: Orion's records about one person's conversations
# decide which threads are whose (what recall searches, what the Home tab shows, what
# forgetting deletes), so nothing the person or Claude writes may reach them.


def person_records_prefix(user_id: str) -> str:
    return f"{PEOPLE_PREFIX}{validate_user_id(user_id)}/"


def conversations_index_key(user_id: str) -> str:
    """The person's past threads (thread, title, updated, channel): whose threads are whose."""
    return f"{person_records_prefix(user_id)}conversations.json"


def search_index_key(user_id: str) -> str:
    """The terms of each of the person's past threads, for `recall` (search_index.py)."""
    return f"{person_records_prefix(user_id)}search.json"


def welcome_key(user_id: str) -> str:
    """How to greet the person back next time (their latest conversation), written at turn end."""
    return f"{person_records_prefix(user_id)}welcome.json"


def is_channel_id(value: object) -> bool:
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


# CHANNELS_PREFIX is the channels' memory, which the memory tool reaches within one
# channel's conversations only (ChannelMemoryScope). CHANNEL_RECORDS_PREFIX is Orion's
# own about each channel (what decides which threads are the channel's, what recall
# searches, who changed what), and CHANNEL_SETTINGS_PREFIX an admin's choices: nothing
# anyone says in a channel, nor Claude, can write them.


def channel_prefix(channel_id: str) -> str:
    """The channel's memory directory (`/memories/channels/{channel}/` to the model)."""
    return f"{CHANNELS_PREFIX}{validate_channel(channel_id)}/"


def channel_records_prefix(channel_id: str) -> str:
    return f"{CHANNEL_RECORDS_PREFIX}{validate_channel(channel_id)}/"


def channel_summary_key(channel_id: str, thread_ts: str) -> str:
    """The summary of one of the channel's threads."""
    name = validate_thread_ts(thread_ts).replace(".", "-")
    return f"{channel_records_prefix(channel_id)}threads/{name}.md"


def channel_search_index_key(channel_id: str) -> str:
    """The terms of each of the channel's summarised threads, for `recall`."""
    return f"{channel_records_prefix(channel_id)}search.json"


def channel_changes_key(channel_id: str) -> str:
    """Who changed the channel's memory, and when (app/learning/channel_memory.py)."""
    return f"{channel_records_prefix(channel_id)}changes.json"


def channel_conversations_prefix(channel_id: str) -> str:
    """The channel's conversation records, listed by thread (empty markers): how erasing
    the channel finds every record of its threads without listing the bucket."""
    return f"{channel_records_prefix(channel_id)}conversations/"


def channel_conversation_marker_key(channel_id: str, thread_ts: str) -> str:
    name = validate_thread_ts(thread_ts).replace(".", "-")
    return f"{channel_conversations_prefix(channel_id)}{name}"


def thread_of_channel_marker_key(channel_id: str, key: str) -> str | None:
    markers = channel_conversations_prefix(channel_id)
    return _thread_of_name(key[len(markers) :]) if key.startswith(markers) else None


def archived_channel_prefix(channel_id: str) -> str:
    """Where an archived channel's memory waits out the retention window, out of every
    conversation's reach (a channel unarchived gets it back)."""
    return f"{channel_records_prefix(channel_id)}archived/"


def public_channels_key() -> str:
    """The workspace's public channels with a search index, for recall across them."""
    return f"{CHANNEL_RECORDS_PREFIX}public.json"


def workspace_channel_settings_key() -> str:
    return f"{CHANNEL_SETTINGS_PREFIX}workspace.json"


def channel_settings_key(channel_id: str) -> str:
    return f"{CHANNEL_SETTINGS_PREFIX}{validate_channel(channel_id)}.json"


def thread_contexts_prefix(channel_id: str) -> str:
    if not is_channel_id(channel_id):
        raise ValueError(f"not a Slack channel id: {channel_id!r}")
    return f"{THREADS_PREFIX}{channel_id}/"


def thread_context_key(channel_id: str, thread_ts: str) -> str:
    """Where an assistant thread's saved context lives (not visible to the model)."""
    name = validate_thread_ts(thread_ts).replace(".", "-")
    return f"{thread_contexts_prefix(channel_id)}{name}.json"


def thread_of_context_key(key: str) -> str | None:
    """The thread of a saved context's key (`threads/D…/1712-345.json`), else None."""
    return _thread_of_name(key.rsplit("/", 1)[-1].removesuffix(".json"))


def _thread_of_name(name: str) -> str | None:
    """The thread a key's last segment names (`1712-345` → `1712.345`), else None."""
    thread = name.replace("-", ".", 1)
    return thread if _THREAD_TS.fullmatch(thread) else None


# CONVERSATIONS_PREFIX is Orion's own as well: a conversation's record says who opened it
# (so an event naming someone else's thread reaches nothing of theirs) and holds its
# transcript. Keyed by the thread alone, as `sessions/` is: whoever names the thread
# finds the record, and with it whose the thread is.


def conversation_record_key(thread_ts: str) -> str:
    """One conversation's record: its owner and its transcript (app/learning/conversations.py)."""
    return f"{CONVERSATIONS_PREFIX}{validate_thread_ts(thread_ts).replace('.', '-')}.json"


def said_markers_prefix(user_id: str) -> str:
    """The channel conversations the person spoke in (empty markers, by thread): how
    forgetting them takes what they said out of those transcripts."""
    return f"{person_records_prefix(user_id)}said/"


def said_marker_key(user_id: str, thread_ts: str) -> str:
    name = validate_thread_ts(thread_ts).replace(".", "-")
    return f"{said_markers_prefix(user_id)}{name}"


def thread_of_said_marker_key(user_id: str, key: str) -> str | None:
    markers = said_markers_prefix(user_id)
    return _thread_of_name(key[len(markers) :]) if key.startswith(markers) else None


def conversation_markers_prefix(user_id: str) -> str:
    """The person's conversation records, listed by thread (empty objects): how forgetting
    the person finds every record of theirs, summarised or not."""
    return f"{person_records_prefix(user_id)}threads/"


def conversation_marker_key(user_id: str, thread_ts: str) -> str:
    name = validate_thread_ts(thread_ts).replace(".", "-")
    return f"{conversation_markers_prefix(user_id)}{name}"


def thread_of_marker_key(user_id: str, key: str) -> str | None:
    """The thread a conversation marker of the person's names, else None."""
    markers = conversation_markers_prefix(user_id)
    if not key.startswith(markers):
        return None
    return _thread_of_name(key[len(markers) :])


# UNDO_PREFIX and SETTINGS_PREFIX are Orion's own too: an undo record decides which files
# an Undo click rewrites, and a person's settings what Orion shows them.
_UNDO_ID = re.compile(r"[0-9a-f]{32}")


def is_undo_id(value: object) -> bool:
    return isinstance(value, str) and _UNDO_ID.fullmatch(value) is not None


def undo_record_key(undo_id: str) -> str:
    """One answer's undo record, found from the id its Undo button carries."""
    if not is_undo_id(undo_id):
        raise ValueError("not an undo id")
    return f"{UNDO_PREFIX}{undo_id}.json"


def undo_markers_prefix(user_id: str) -> str:
    """The person's undo records, listed by id (empty objects): how forgetting the person
    finds their records without listing everyone's."""
    return f"{person_records_prefix(user_id)}undo/"


def undo_marker_key(user_id: str, undo_id: str) -> str:
    if not is_undo_id(undo_id):
        raise ValueError("not an undo id")
    return f"{undo_markers_prefix(user_id)}{undo_id}"


def person_settings_key(user_id: str) -> str:
    """The person's choices about how Orion behaves with them (app/learning/person_settings.py)."""
    return f"{SETTINGS_PREFIX}{validate_user_id(user_id)}.json"
