"""A conversation's summary: rewritten after every turn, kept with the conversation, shown on the
Home tab and searched."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.learning.timestamps import format_time, parse_time

MAX_TITLE_CHARS = 80
MAX_SUMMARY_CHARS = 2_000
UNTITLED = "Conversation with Orion"


@dataclass(frozen=True)
class SummaryDraft:
    """What a summarizer produces: a title and the summary text, and (from a model) how to
    welcome the person back to this conversation next time, in their language."""

    title: str
    body: str
    welcome: str | None = None  # one sentence greeting them back to the topic
    next_step: str | None = None  # a short suggestion to continue, for a prompt button


@dataclass(frozen=True)
class Summary:
    """A conversation's gist: a title, a body, and when it was made."""

    title: str
    body: str
    updated: datetime

    def to_json(self) -> dict[str, str]:
        return {"title": self.title, "body": self.body, "updated": format_time(self.updated)}

    @staticmethod
    def parse(item: object) -> Summary | None:
        if not isinstance(item, dict):
            return None
        title, body, moment = item.get("title"), item.get("body"), parse_time(item.get("updated"))
        if not isinstance(title, str) or not isinstance(body, str) or moment is None:
            return None
        return Summary(title[:MAX_TITLE_CHARS], body[:MAX_SUMMARY_CHARS], moment)
