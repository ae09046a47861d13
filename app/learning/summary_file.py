"""The session summary file of one assistant thread, and its model.

After every turn Orion rewrites `sessions/{thread}/context.md` with a short summary of the
whole thread so far; the loader restores it when the thread resumes, and `recall` searches
it later. The file is Markdown, written for Claude to read:

    # <title>

    Last updated: 2026-05-04T10:12:00Z
    User: U0123ABCD

    <summary>
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.learning.plain_text import one_line
from app.learning.timestamps import format_time, parse_time

MAX_TITLE_CHARS = 80
MAX_SUMMARY_CHARS = 2_000
UNTITLED = "Conversation with Orion"

_UPDATED_LINE = "Last updated: "
_USER_LINE = "User: "


@dataclass(frozen=True)
class SummaryDraft:
    """What a summarizer produces: a title and the summary text, and (from a model) how to
    welcome the person back to this conversation next time, in their language."""

    title: str
    body: str
    welcome: str | None = None  # one sentence greeting them back to the topic
    next_step: str | None = None  # a short suggestion to continue, for a prompt button


@dataclass(frozen=True)
class SessionSummary:
    title: str
    body: str
    user_id: str | None = None
    updated: datetime | None = None


def render_summary(summary: SessionSummary) -> str:
    lines = [f"# {one_line(summary.title, MAX_TITLE_CHARS) or UNTITLED}", ""]
    if summary.updated is not None:
        lines.append(f"{_UPDATED_LINE}{format_time(summary.updated)}")
    if summary.user_id is not None:
        lines.append(f"{_USER_LINE}{summary.user_id}")
    return "\n".join([*lines, "", summary.body.strip(), ""])


def parse_summary(text: str) -> SessionSummary:
    """Read a summary file back; tolerant of hand- or model-edited files."""
    lines = text.strip().splitlines()
    title = UNTITLED
    if lines and lines[0].startswith("#"):
        title = lines.pop(0).lstrip("#").strip() or UNTITLED
    user_id: str | None = None
    updated: datetime | None = None
    body_start = 0
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(_UPDATED_LINE):
            updated = parse_time(stripped[len(_UPDATED_LINE) :])
        elif stripped.startswith(_USER_LINE):
            user_id = stripped[len(_USER_LINE) :].strip() or None
        elif stripped:
            break
        body_start = index + 1
    body = "\n".join(lines[body_start:]).strip()
    return SessionSummary(title=title, body=body, user_id=user_id, updated=updated)
