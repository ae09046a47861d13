"""One task the person sees while Orion works with memory: plain data, import-light (no SDK), its
title fixed words plus short, flattened pieces of the model's input (docs/agent-display.md)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Literal

from app.learning.plain_text import clip, one_line

TaskStatus = Literal["in_progress", "complete", "error"]

RESTORE_TASK_ID = "memory-restore"
RESTORE_TITLE = "Restoring what I remember about you"
# In a channel thread: the thread's summary and the organisation's context, for everyone.
CHANNEL_RESTORE_TITLE = "Restoring what I remember of this thread"


@dataclass(frozen=True)
class TaskSource:
    """A past conversation a task used: its thread, where it is, and its title; or one of
    its messages (`message_ts`, a passage a search found in it)."""

    thread_ts: str
    channel: str
    title: str
    message_ts: str | None = None


@dataclass(frozen=True)
class MemoryTask:
    id: str
    title: str
    status: TaskStatus
    output: str | None = None
    sources: tuple[TaskSource, ...] = ()


def restore_started(*, in_channel: bool = False) -> MemoryTask:
    title = CHANNEL_RESTORE_TITLE if in_channel else RESTORE_TITLE
    return MemoryTask(RESTORE_TASK_ID, title, "in_progress")


def restore_finished(*, restored: bool, found: bool, in_channel: bool = False) -> MemoryTask:
    """`restored`: every read answered; `found`: there was something to remember;
    `in_channel`: a channel thread's restore (nothing of anyone's own is restored)."""
    title = CHANNEL_RESTORE_TITLE if in_channel else RESTORE_TITLE
    if not restored:
        output = "Couldn't reach my memory just now, so I'm answering without all of it"
        return MemoryTask(RESTORE_TASK_ID, title, "error", output)
    if in_channel:
        output = "Restored what this thread was about" if found else "Nothing saved for it yet"
    else:
        output = "Restored your preferences and notes" if found else "Nothing saved about you yet"
    return MemoryTask(RESTORE_TASK_ID, title, "complete", output)


# Square brackets start a Markdown link (`[text](url)`): shown as parentheses, a title
# can never become one.
_NO_LINKS = str.maketrans("[]", "()")


def plain(text: str, limit: int) -> str:
    """`text` as one short line of visible characters: no controls, no format characters
    (direction overrides, zero-width ones), no Markdown link, cut at `limit` with an
    ellipsis. Linear, and reads at most a few times `limit` of `text`."""
    head = one_line(text[: limit * 4].translate(_NO_LINKS), limit * 4)
    visible = "".join(c for c in head if unicodedata.category(c) not in ("Cc", "Cf"))
    flat = one_line(visible, limit + 1)
    return clip(flat, limit)
