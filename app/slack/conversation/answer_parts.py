"""An answer longer than one Slack message, cut into messages read as one: between top-level
Markdown blocks (markdown-it-py), a code block cut inside closed and reopened with its language."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt


@dataclass(frozen=True)
class _Fence:
    """A code block: its opening line as written, the line Orion closes it with when it
    must, and the room to keep free while inside it (for either closing line)."""

    opener: str
    closer: str
    room: int


def split_markdown(text: str, limit: int) -> list[str]:
    """`text` as messages of at most `limit` characters each, in order: joined, `text` itself
    but for the fence lines added around a code block that had to be cut."""
    if len(text) <= limit:
        return [text]
    lines = text.splitlines(keepends=True)
    open_after, starts = _read_blocks(lines)
    parts: list[str] = []
    current = ""
    for begin, end in zip(starts, [*starts[1:], len(lines)], strict=True):
        block = "".join(lines[begin:end])
        if len(current) + len(block) <= limit:
            current += block
            continue
        if current:
            parts.append(current)
        pieces = _cut_lines(lines[begin:end], open_after[begin:end], limit)
        parts.extend(pieces[:-1])
        current = pieces[-1]
    if current:
        parts.append(current)
    return parts


def rest_of(text: str, shown: int) -> str:
    """What follows the first `shown` characters of `text`, readable on its own: the code
    block the cut falls in is reopened (with its language) first."""
    lines = text.splitlines(keepends=True)
    open_after, _ = _read_blocks(lines)
    offset = 0
    for i, line in enumerate(lines):
        if offset + len(line) > shown:
            # The cut is in line i: reopen the code block open before it, if any.
            fence = open_after[i - 1] if i else None
            return (fence.opener if fence else "") + text[shown:]
        offset += len(line)
    return text[shown:]


def _read_blocks(lines: list[str]) -> tuple[list[_Fence | None], list[int]]:
    """For each line, the code block still open after it (its opening line and its content
    lines), else None; and the first line of each top-level block (the blank lines after a
    block belong to it)."""
    open_after: list[_Fence | None] = [None] * len(lines)
    starts = {0}
    for token in _parser().parse("".join(lines)):
        if token.map is None:
            continue
        first, last = token.map
        if token.level == 0 and token.nesting >= 0:
            starts.add(first)
        if token.type != "fence":
            continue
        opener = lines[first] if lines[first].endswith("\n") else lines[first] + "\n"
        indent = opener[: len(opener) - len(opener.lstrip(" "))]
        closer = f"{indent}{token.markup}\n"
        closed = last - first >= 2 and lines[last - 1].strip().startswith(token.markup)
        content_end = last - 1 if closed else last
        room = max(len(closer), len(lines[last - 1]) if closed else 0)
        fence = _Fence(opener, closer, room)
        for i in range(first, content_end):
            open_after[i] = fence
    return open_after, sorted(starts)


def _cut_lines(lines: list[str], open_after: list[_Fence | None], limit: int) -> list[str]:
    """One block longer than a message, cut between lines (a line longer than a message is
    cut too, at a space where there is one); a cut inside code closes and reopens it."""
    # A code block whose fence lines fill half a message (a line of thousands of backticks)
    # cannot be closed and reopened around its content: it is cut like text. Reopening it
    # would leave no room for content, and the cutting would never end.
    open_after = [
        fence if fence is not None and len(fence.opener) + fence.room <= limit // 2 else None
        for fence in open_after
    ]
    pieces: list[str] = []
    current = ""  # the message being filled
    fresh = ""  # what `current` started with: nothing, or a reopened code block
    for i, line in enumerate(lines):
        before = open_after[i - 1] if i else None  # the code block open before this line
        after = open_after[i]
        while len(current) + len(line) + (after.room if after else 0) > limit:
            if current != fresh:
                # Start this line on a new message rather than cut it.
                opened_last = before is not None and (i < 2 or open_after[i - 2] is not before)
                if not opened_last:
                    pieces.append(current + (before.closer if before else ""))
                    fresh = current = before.opener if before else ""
                    continue
                # The message ends with this code block's opening line: move that along.
                kept = current[: len(current) - len(lines[i - 1])]
                if kept != fresh:
                    pieces.append(kept)
                    fresh = current = lines[i - 1]
                    continue
            # A line longer than a whole message: cut it, reopening the code it is in.
            inside = after if after is not None and after is before else None
            closer = "\n" + inside.closer if inside else ""
            room = limit - len(current) - len(closer)
            head = _cut_at_space(line, room) or line[: max(room, 1)]
            pieces.append(current + head + closer)
            fresh = current = inside.opener if inside else ""
            line = line[len(head) :]
        current += line
    if current != fresh or not pieces:
        pieces.append(current)
    return pieces


def _cut_at_space(line: str, room: int) -> str:
    """The longest start of `line` that fits in `room` and ends after a space, else ''
    (when a line is only cut because it is the first on its message, any cut will do)."""
    cut = line.rfind(" ", 0, room)
    return line[: cut + 1] if cut > 0 else ""


@cache
def _parser() -> MarkdownIt:
    # Imported on first use: only answers longer than a message need it.
    from markdown_it import MarkdownIt

    # Blocks only: the cuts never look inside a paragraph's text, and the inline rules
    # (links, emphasis) cost time quadratic in inputs such as thousands of `[` or `![`.
    return MarkdownIt("commonmark").enable("table").disable("inline")
