"""What a Slack workspace holds, as seen by a user: messages in channels and threads, and the
assistant-thread chrome (status line, suggested prompts, title).

FakeSlack mutates this from its server thread while tests read it from theirs, so every
access goes through one lock and readers get copies.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

BOT_USER_ID = "UBOT"
BOT_ID = "BBOT"
APP_ID = "A1"
TEAM_ID = "T1"
# Slack's own root message of an assistant thread: in conversations.replies, not in the pane.
ASSISTANT_THREAD_ROOT = "assistant_app_thread"

# Slack ts values are "<seconds>.<microseconds>" of the time the message was posted. One
# clock per process, shared by every FakeSlack and the event builders, so all ts values are
# unique and increase in creation order, and (as in Slack) follow the wall clock: Orion
# compares them with its own times (what was said before a person asked to be forgotten).
_TS_STEP_MICROS = 100
_clock_lock = threading.Lock()
_clock = [0]


def new_ts() -> str:
    with _clock_lock:
        micros = max(_clock[0] + _TS_STEP_MICROS, time.time_ns() // 1_000)
        _clock[0] = micros
    return format_ts(micros)


@dataclass
class Message:
    ts: str
    channel: str
    thread_ts: str | None
    text: str
    user: str | None = None
    bot_id: str | None = None
    # Another app's (its own app id), and the name an integration posts under (Slack's
    # `username` of a `bot_message`: whatever its sender chose).
    app_id: str | None = None
    username: str | None = None
    blocks: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] | None = None
    streaming: bool = False
    # Non-markdown stream chunks (task_update, plan_update, ...) in arrival order.
    chunks: list[dict[str, Any]] = field(default_factory=list)
    # How the stream's tasks show (chat.startStream's `task_display_mode`), if it said.
    task_display_mode: str | None = None
    subtype: str | None = None
    edited: bool = False
    deleted: bool = False
    # chat.postMessage's `unfurl_links` / `unfurl_media`, as sent (None: not sent); the
    # streaming methods and chat.update take neither.
    posted: bool = False  # by chat.postMessage (not a stream, not a person)
    unfurl_links: bool | None = None
    unfurl_media: bool | None = None

    @property
    def is_bot(self) -> bool:
        return self.bot_id is not None

    @property
    def would_unfurl(self) -> bool:
        """Whether Slack would fetch a link of this message to unfurl it. A posted message
        with a link does unless both `unfurl_links` and `unfurl_media` were false (what Slack
        unfurls by default depends on the link: here, anything not turned off). A streamed
        message is taken not to: the streaming methods take no unfurl arguments, and Slack
        documents no unfurling of streams (unverified)."""
        if not self.posted:
            return False
        has_link = "http://" in self.text or "https://" in self.text
        has_link = has_link or "http" in json.dumps(self.blocks)
        return has_link and not (self.unfurl_links is False and self.unfurl_media is False)

    def in_thread(self, thread_ts: str) -> bool:
        return self.ts == thread_ts or self.thread_ts == thread_ts

    def to_api(self, *, include_metadata: bool = True) -> dict[str, Any]:
        """The message as Slack's Web API returns it (conversations.replies, chat.* responses)."""
        out: dict[str, Any] = {"type": "message", "ts": self.ts, "text": self.text}
        if self.user is not None:
            out["user"] = self.user
        if self.bot_id is not None:
            out["bot_id"] = self.bot_id
            out["app_id"] = self.app_id or APP_ID
        if self.username is not None:
            out["username"] = self.username
        if self.subtype is not None:
            out["subtype"] = self.subtype
        if self.thread_ts is not None:
            out["thread_ts"] = self.thread_ts
        out["team"] = TEAM_ID
        # Slack gives every text message a rich_text block; Bolt's thread-context store reads
        # message["blocks"] unconditionally.
        out["blocks"] = copy.deepcopy(self.blocks) or [_rich_text_block(self.text)]
        if self.edited:
            out["edited"] = {"user": self.user, "ts": self.ts}
        if include_metadata and self.metadata is not None:
            out["metadata"] = copy.deepcopy(self.metadata)
        return out


TASK_STATUSES = ("pending", "in_progress", "complete", "error")


@dataclass(frozen=True)
class Task:
    """One task of a streamed message as the person sees it at the end: the latest update
    of its id, and every status it went through."""

    id: str
    title: str
    status: str
    output: str | None
    details: str | None
    sources: list[dict[str, Any]]
    statuses: list[str]


def tasks_of(chunks: list[dict[str, Any]]) -> list[Task]:
    """The tasks `chunks` show, in the order they first appeared."""
    tasks: dict[str, Task] = {}
    for chunk in chunks:
        if chunk.get("type") != "task_update":
            continue
        seen = tasks.get(chunk["id"])
        tasks[chunk["id"]] = Task(
            id=chunk["id"],
            title=chunk["title"],
            status=chunk["status"],
            output=chunk.get("output"),
            details=chunk.get("details"),
            sources=copy.deepcopy(chunk.get("sources") or []),
            statuses=[*(seen.statuses if seen else []), chunk["status"]],
        )
    return list(tasks.values())


@dataclass(frozen=True)
class StatusUpdate:
    status: str
    loading_messages: list[str] | None = None


@dataclass(frozen=True)
class SuggestedPrompts:
    prompts: list[dict[str, Any]]
    title: str | None = None


# agents.sessions.setStatus accepts these and nothing else (no free text, no "").
SESSION_STATUSES = ("active", "processing", "suspended", "closed")


@dataclass
class AgentSession:
    """One agent_view conversation's session: the statuses it went through and its titles."""

    statuses: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.statuses[-1]


@dataclass
class Channel:
    """A public or private channel: who is in it (Orion's bot user when the app was
    added), and what conversations.info says of it."""

    id: str
    name: str
    private: bool = False
    archived: bool = False
    shared_externally: bool = False  # Slack Connect: another organisation is in it
    members: list[str] = field(default_factory=list)
    # The workspaces of an Enterprise Grid organisation it is in (several: shared across
    # the organisation, `is_org_shared`); the first is its own (`context_team_id`).
    workspaces: tuple[str, ...] = (TEAM_ID,)

    def info(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "is_channel": True,
            "is_group": False,
            "is_im": False,
            "is_mpim": False,
            "is_private": self.private,
            "is_archived": self.archived,
            "is_shared": self.shared_externally or len(self.workspaces) > 1,
            "is_ext_shared": self.shared_externally,
            "is_org_shared": len(self.workspaces) > 1,
            "is_member": BOT_USER_ID in self.members,
            "context_team_id": self.workspaces[0],
            "shared_team_ids": list(self.workspaces),
            "num_members": len(self.members),
        }


def _rich_text_block(text: str) -> dict[str, Any]:
    return {
        "type": "rich_text",
        "block_id": "fake",
        "elements": [{"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}],
    }


def format_ts(micros: int) -> str:
    return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"


class Workspace:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._messages: dict[tuple[str, str], Message] = {}
        # (channel, thread ts) → keys of the parent and replies: conversations.replies
        # must not scan a workspace of thousands of messages (the throughput benchmark).
        self._thread_keys: dict[tuple[str, str], list[tuple[str, str]]] = {}
        self._statuses: dict[tuple[str, str], list[StatusUpdate]] = {}
        self._current_status: dict[tuple[str, str], str] = {}
        self._prompts: dict[tuple[str, str], list[SuggestedPrompts]] = {}
        self._titles: dict[tuple[str, str], list[str]] = {}
        self._sessions: dict[tuple[str, str], AgentSession] = {}
        self.users: dict[str, dict[str, Any]] = {}
        self.channels: dict[str, Channel] = {}

    # --- writes (called by FakeSlack handlers or tests) ---

    def new_ts(self) -> str:
        return new_ts()

    def add(self, message: Message) -> Message:
        with self.lock:
            key = (message.channel, message.ts)
            if key not in self._messages:
                for thread_ts in {t for t in (message.ts, message.thread_ts) if t is not None}:
                    self._thread_keys.setdefault((message.channel, thread_ts), []).append(key)
            self._messages[key] = message
            if message.is_bot and message.thread_ts is not None:
                # Slack clears the assistant status line when the app replies in the thread.
                self._current_status[(message.channel, message.thread_ts)] = ""
            return message

    def get(self, channel: str, ts: str) -> Message | None:
        with self.lock:
            message = self._messages.get((channel, ts))
            return None if message is None or message.deleted else message

    def set_status(self, channel: str, thread_ts: str, update: StatusUpdate) -> None:
        with self.lock:
            self._statuses.setdefault((channel, thread_ts), []).append(update)
            self._current_status[(channel, thread_ts)] = update.status

    def set_prompts(self, channel: str, thread_ts: str, prompts: SuggestedPrompts) -> None:
        with self.lock:
            self._prompts.setdefault((channel, thread_ts), []).append(prompts)

    def set_title(self, channel: str, thread_ts: str, title: str) -> None:
        with self.lock:
            self._titles.setdefault((channel, thread_ts), []).append(title)

    def set_session_status(
        self, channel: str, thread_ts: str, status: str, title: str | None
    ) -> None:
        with self.lock:
            session = self._sessions.get((channel, thread_ts))
            if session is None:  # the first call creates the session (and names it)
                session = self._sessions[(channel, thread_ts)] = AgentSession()
                if title:
                    session.titles.append(title)
            session.statuses.append(status)

    def stream_stopped(self, channel: str, thread_ts: str | None, status: str) -> None:
        """A stream in the thread ended: its agent session, if it has one, takes `status`."""
        with self.lock:
            session = self._sessions.get((channel, thread_ts or ""))
            if session is not None:
                session.statuses.append(status)

    def rename_session(self, channel: str, thread_ts: str, title: str) -> bool:
        with self.lock:
            session = self._sessions.get((channel, thread_ts))
            if session is None:
                return False
            session.titles.append(title)
            return True

    # --- reads (copies, safe to keep) ---

    def thread(
        self, channel: str, thread_ts: str, *, with_root: bool = False, copied: bool = True
    ) -> list[Message]:
        """`copied=False`: the workspace's own messages, for a caller that holds `lock` while
        it reads them (copying 20,000 messages took seconds, for a page of 200)."""
        with self.lock:
            candidates = (
                self._messages[k] for k in self._thread_keys.get((channel, thread_ts), [])
            )
            found = [
                m
                for m in candidates
                if not m.deleted
                and m.in_thread(thread_ts)
                and (with_root or m.subtype != ASSISTANT_THREAD_ROOT)
            ]
            in_order = sorted(found, key=lambda m: _ts_key(m.ts))
            return [copy.deepcopy(m) for m in in_order] if copied else in_order

    def channel_top_level(self, channel: str) -> list[Message]:
        with self.lock:
            found = [
                m
                for (ch, _), m in self._messages.items()
                if ch == channel and not m.deleted and (m.thread_ts in (None, m.ts))
            ]
            return [copy.deepcopy(m) for m in sorted(found, key=lambda m: _ts_key(m.ts))]

    def all_messages(self) -> list[Message]:
        with self.lock:
            found = [m for m in self._messages.values() if not m.deleted]
            return [copy.deepcopy(m) for m in sorted(found, key=lambda m: _ts_key(m.ts))]

    def count(self, predicate: Callable[[Message], bool]) -> int:
        """How many messages match, without copying any (for polling a large workspace)."""
        with self.lock:
            return sum(1 for m in self._messages.values() if not m.deleted and predicate(m))

    def streaming_messages(self) -> list[Message]:
        with self.lock:
            return [m for m in self._messages.values() if m.streaming and not m.deleted]

    def statuses(self, channel: str, thread_ts: str) -> list[StatusUpdate]:
        with self.lock:
            return list(self._statuses.get((channel, thread_ts), []))

    def current_status(self, channel: str, thread_ts: str) -> str:
        with self.lock:
            return self._current_status.get((channel, thread_ts), "")

    def prompts(self, channel: str, thread_ts: str) -> list[SuggestedPrompts]:
        with self.lock:
            return copy.deepcopy(self._prompts.get((channel, thread_ts), []))

    def titles(self, channel: str, thread_ts: str) -> list[str]:
        with self.lock:
            return list(self._titles.get((channel, thread_ts), []))

    def session(self, channel: str, thread_ts: str) -> AgentSession | None:
        with self.lock:
            return copy.deepcopy(self._sessions.get((channel, thread_ts)))


def _ts_key(ts: str) -> tuple[int, int]:
    seconds, _, micros = ts.partition(".")
    return int(seconds), int(micros or 0)
