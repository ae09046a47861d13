"""A person's memory as one Markdown document (the download, or Claude's overview), every line from
the inventory, so neither says more or less than storage holds."""

from __future__ import annotations

import re

from app.learning.memory_inventory import CUT, MemoryInventory
from app.learning.timestamps import format_time

_BACKTICKS = re.compile("`+")


def render_memory(inventory: MemoryInventory, *, full: bool) -> str:
    """`full`: every note and summary in full (an export); else their first lines, marked
    with CUT where there is more (see `shortened`)."""
    lines = [f"# What Orion remembers about {inventory.user_id}", ""]
    if inventory.empty:
        return "\n".join([*lines, "Nothing: Orion keeps no memory about this person.", ""])
    lines += ["## Preferences", ""]
    for item in inventory.preferences or []:
        learned = item.learned
        where = f", in thread {learned.thread_ts}" if learned and learned.thread_ts else ""
        when = f" (learned {format_time(learned.at)}{where})" if learned else ""
        lines.append(f"- {item.key.replace('_', ' ')}: {item.value}{when}")
    if not inventory.preferences:
        lines.append("None.")
    lines += ["", "## Notes", ""]
    for note in inventory.notes:
        lines += [f"### {note.path}", f"{note.size} bytes, changed {format_time(note.updated)}"]
        body = note.content if full and note.content is not None else note.preview
        lines += ["", _fenced(body), ""]
    if not inventory.notes:
        lines += ["None.", ""]
    lines += ["## Conversations", ""]
    for conversation in inventory.conversations:
        lines.append(f"### {conversation.title}")
        lines.append(f"Thread {conversation.thread_ts}, last {format_time(conversation.updated)}")
        if conversation.summary:
            summary = conversation.summary if full else _first_line(conversation.summary)
            lines += ["", summary.strip()]
        lines.append("")
    if not inventory.conversations:
        lines += ["None.", ""]
    return "\n".join(lines)


def shortened(inventory: MemoryInventory) -> bool:
    """Whether the overview (`full=False`) of this inventory leaves part of a note or a
    summary out."""
    return any(note.preview.endswith(CUT) for note in inventory.notes) or any(
        c.summary and _first_line(c.summary) != c.summary.strip() for c in inventory.conversations
    )


def _first_line(summary: str) -> str:
    lines = summary.strip().splitlines() or [""]
    return lines[0] + (f" {CUT}" if len(lines) > 1 else "")


def _fenced(text: str) -> str:
    """`text` in a code fence longer than any backtick run inside it."""
    # Runs found by the regex engine: a loop over the characters in Python took seconds
    # for an export of many large notes.
    longest = max(map(len, _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip()}\n{fence}"
