"""The tool calls of a turn as tasks the person can watch (docs/agent-display.md): a failed one
ends `error`, never shown as found-nothing or saved."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from app.agent.memory_task import MemoryTask, TaskSource, TaskStatus, plain
from app.agent.reply_sink import ReplySink
from app.agent.tool_registry import ToolOutcome, ToolRegistry
from app.learning.erasure import FORGETTABLE
from app.learning.memory_tools import FORGET_TOOL_NAME, OVERVIEW_TOOL_NAME
from app.learning.recall import RECALL_TOOL_NAME, RecalledConversation, RecallLog
from app.observability.logging import get_logger

log = get_logger(__name__)

MORE_TASK_ID = "memory-more"
MAX_TASKS = 10
# The model's words in a title: enough to recognise them.
NAME_CHARS = 60
QUERY_CHARS = 80
SOURCE_TITLE_CHARS = 80
PASSAGE_CHARS = 60
MAX_SOURCES = 10
WRITES = {"create": "Saving", "str_replace": "Updating", "insert": "Updating"}


class MemoryTasks:
    """One turn's tasks, reported to `sink` as they change. Reporting never fails a turn."""

    def __init__(self, sink: ReplySink, recalls: RecallLog | None = None) -> None:
        self._sink = sink
        self._recalls = recalls
        self._shown = 0
        self._more = 0
        self._more_failed = 0

    async def show(self, task: MemoryTask) -> None:
        try:
            await self._sink.show_task(task)
        except Exception as exc:  # the display is a nicety: the answer goes on without it
            log.warning("agent.task_display_failed", exc_info=exc)

    async def run(self, tools: ToolRegistry, block: Any) -> dict[str, Any]:
        """Run one `tool_use` block with its task shown; its `tool_result` block."""
        started = self._begin(block.name, block.input)
        await self.show(started)
        outcome = await tools.outcome(block.id, block.name, block.input)
        await self.show(self._end(started, block.name, block.input, outcome))
        return outcome.result

    def _begin(self, name: str, tool_input: object) -> MemoryTask:
        if self._shown >= MAX_TASKS:
            self._more += 1
            return MemoryTask(MORE_TASK_ID, f"{self._more} more memory steps", "in_progress")
        self._shown += 1
        return MemoryTask(f"memory-{self._shown}", _title(name, tool_input), "in_progress")

    def _end(
        self, task: MemoryTask, name: str, tool_input: object, outcome: ToolOutcome
    ) -> MemoryTask:
        found = (
            self._recalls.take() if self._recalls is not None and name == RECALL_TOOL_NAME else []
        )
        status, output = _result(name, tool_input, outcome, len(found))
        if task.id == MORE_TASK_ID:
            # One task for many calls: an error once any of them could not be done.
            self._more_failed += status == "error"
            if not self._more_failed:
                return replace(task, status="complete", output="Done")
            output = f"{self._more_failed} of them couldn't be done"
            return replace(task, status="error", output=output)
        return replace(task, status=status, output=output, sources=_sources(found))


def _sources(found: list[RecalledConversation]) -> tuple[TaskSource, ...]:
    """The conversations a search found, then the messages it quoted from them for the
    question's words (linked to the message in its thread; not their neighbours), at
    most MAX_SOURCES in all."""
    shown = [f for f in found if f.channel]
    sources = [
        TaskSource(f.thread_ts, f.channel or "", plain(f.title, SOURCE_TITLE_CHARS)) for f in shown
    ]
    for f in shown:
        for passage in f.passages:
            if passage.matched and passage.ts is not None and passage.ts != f.thread_ts:
                quoted = plain(passage.text, PASSAGE_CHARS)
                sources.append(TaskSource(f.thread_ts, f.channel or "", f"“{quoted}”", passage.ts))
    return tuple(sources[:MAX_SOURCES])


def _command(tool_input: object) -> tuple[str, str]:
    """The memory command and the file's name (the last part of its path), bounded."""
    fields: Mapping[str, Any] = tool_input if isinstance(tool_input, Mapping) else {}
    command = fields.get("command")
    path = fields.get("path") or fields.get("old_path")
    name = path.rstrip("/").rsplit("/", 1)[-1] if isinstance(path, str) else ""
    shown = plain(name, NAME_CHARS)
    return (command if isinstance(command, str) else ""), shown


def _title(name: str, tool_input: object) -> str:
    if name == RECALL_TOOL_NAME:
        fields = tool_input if isinstance(tool_input, Mapping) else {}
        given = fields.get("queries", fields.get("query"))
        queries = [given] if isinstance(given, str) else given if isinstance(given, list) else []
        asked = " · ".join(q for q in queries if isinstance(q, str) and q.strip())
        words = plain(asked, QUERY_CHARS)
        if not words:
            return "Looking through recent conversations"
        return f"Searching past conversations for “{words}”"
    if name == OVERVIEW_TOOL_NAME:
        return "Listing what I remember about you"
    if name == FORGET_TOOL_NAME:
        kind = tool_input.get("kind") if isinstance(tool_input, Mapping) else None
        return f"Forgetting a {kind}" if kind in FORGETTABLE else "Forgetting something"
    if name != "memory":
        return "Working on it"
    command, file = _command(tool_input)
    if command == "view":
        return f"Reading {file}" if file and file != "memories" else "Looking through my notes"
    verb = WRITES.get(command) or {"delete": "Deleting", "rename": "Renaming"}.get(command)
    if verb is None:
        return "Using my memory"
    return f"{verb} {file}" if file else f"{verb} a note"


def _result(
    name: str, tool_input: object, outcome: ToolOutcome, found: int
) -> tuple[TaskStatus, str]:
    """How a finished call shows: a write or search that failed is an error (nothing is
    claimed for it); a read the model aimed at a missing file is only that."""
    if name == RECALL_TOOL_NAME:
        if outcome.failed:
            return "error", "Couldn't search past conversations just now"
        return "complete", (
            f"Found {found} conversation{'s' if found != 1 else ''}" if found else "No match"
        )
    writes = name == FORGET_TOOL_NAME or (
        name == "memory" and _command(tool_input)[0] in (*WRITES, "delete", "rename")
    )
    if outcome.internal:
        done = "saved" if writes else "read"
        return "error", f"Couldn't reach my memory, so nothing was {done}"
    if outcome.failed:
        # The model's request could not be met: a file it looked for is not there yet;
        # anything else (a write refused, an unknown tool) was not done.
        reading = name == "memory" and not writes
        return ("complete", "Nothing there yet") if reading else ("error", "Not done")
    if name != "memory":
        return "complete", "Done"
    command = _command(tool_input)[0]
    return "complete", {"delete": "Deleted", "rename": "Renamed", "view": "Read"}.get(
        command, "Saved"
    )
