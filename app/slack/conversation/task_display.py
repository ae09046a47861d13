"""Orion's memory tasks (app/agent/memory_task.py) as Slack's agent display: `task_update`
chunks in one plan block, streamed with the answer; a workspace that refuses them gets the
status line for the process's life (docs/agent-display.md)."""

from __future__ import annotations

from collections import OrderedDict

from slack_sdk.models.blocks.block_elements import UrlSourceElement
from slack_sdk.models.messages.chunk import PlanUpdateChunk, TaskUpdateChunk

from app.agent.memory_task import MemoryTask, TaskSource
from app.observability.logging import get_logger
from app.slack.conversation.thread_links import TEAMS_KEPT, ThreadLinks
from app.slack.mrkdwn import escape_within

log = get_logger(__name__)

TASK_DISPLAY_MODE = "plan"
PLAN_TITLE = "Working with my memory"
# Slack's limit on a task's title, details and output.
TASK_TEXT_CHARS = 256
SOURCE_TEXT_CHARS = 100
# What Slack answers when it does not take `chunks` / `task_display_mode` (or the stream
# method itself): the display is then left out, and the answer streams as text — in this
# workspace until the process restarts.
CHUNKS_REFUSED = frozenset(
    {
        *("invalid_chunks", "unknown_method", "not_allowed", "not_supported"),
        *("feature_not_enabled", "method_not_supported_for_channel_type"),
    }
)
# Slack's answer to any malformed call: it says nothing about the workspace, so a call
# carrying tasks that gets it goes again as text and this answer's display is given up,
# but the workspace's is not (it would be lost until restart over one bad call).
CHUNKS_REFUSED_THIS_ANSWER = frozenset({"invalid_arguments"})
# A task still in progress when the answer ends: it did not finish, and is not claimed.
UNFINISHED = "Didn't finish"
STOPPED = "Stopped before it finished"


class TaskDisplaySupport:
    """Which workspaces refused the task display, remembered for the process (at most
    TEAMS_KEPT)."""

    def __init__(self) -> None:
        self._refused: OrderedDict[str, None] = OrderedDict()

    def allowed(self, team_id: str | None) -> bool:
        return (team_id or "") not in self._refused

    def refused(self, team_id: str | None, error: str | None) -> None:
        key = team_id or ""
        if key not in self._refused:
            log.info("slack.task_display.unsupported", team_id=team_id, error=error)
        self._refused[key] = None
        while len(self._refused) > TEAMS_KEPT:
            self._refused.popitem(last=False)


def plan_chunk() -> PlanUpdateChunk:
    return PlanUpdateChunk(title=PLAN_TITLE)


def task_chunk(task: MemoryTask, links: ThreadLinks) -> TaskUpdateChunk:
    """The task as Slack shows it: its sources are links to their threads (a passage's,
    to its message in the thread)."""
    sources = [
        UrlSourceElement(
            url=url, text=escape_within(source.title or "A past conversation", SOURCE_TEXT_CHARS)
        )
        for source in task.sources
        if (url := _link(source, links))
    ]
    return TaskUpdateChunk(
        id=task.id,
        title=escape_within(task.title, TASK_TEXT_CHARS),
        status=task.status,
        output=escape_within(task.output, TASK_TEXT_CHARS) if task.output else None,
        sources=sources or None,
    )


def _link(source: TaskSource, links: ThreadLinks) -> str | None:
    if source.message_ts is None:
        return links.to(source.channel, source.thread_ts)
    return links.to(source.channel, source.message_ts, thread_ts=source.thread_ts)
