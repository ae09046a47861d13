"""`create`, `str_replace` and `insert`: writing one file, conditional on the generation read (two
turns editing it at once never lose each other's change) and within its directory's quota."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818StrReplaceCommand,
)

from app.memory.tool.access import ScopedAccess, check_name_holds_no_secret, exists
from app.memory.tool.errors import MemoryToolError, conflict
from app.memory.tool.rendering import numbered_line, split_lines
from app.storage.store import CREATE_ONLY, PreconditionFailed, update

# Enough to find the occurrences in a file; more would only lengthen the error result.
MAX_LISTED_OCCURRENCES = 100


class _FileMissing(Exception):
    """Raised inside an update's transform: there is no file to edit."""


async def create(access: ScopedAccess, command: BetaMemoryTool20250818CreateCommand) -> str:
    path = command.path
    key = access.writable_key(path)
    check_name_holds_no_secret(path)
    access.checked_size(path, command.file_text)
    existing = await access.root_listing(key)
    if exists(key, existing):
        raise MemoryToolError(f"File {path} already exists")
    access.check_destination(path, key, existing, adding=1)
    access.check_room(path, key, existing, writing={key: len(command.file_text.encode())})
    try:
        await access.store.write(key, command.file_text, if_generation=CREATE_ONLY)
    except PreconditionFailed:
        raise MemoryToolError(f"File {path} already exists") from None
    return f"File created successfully at: {path}"


async def str_replace(
    access: ScopedAccess, command: BetaMemoryTool20250818StrReplaceCommand
) -> str:
    path, old, new = command.path, command.old_str, command.new_str
    key = access.writable_key(path)
    changed_line = 0

    def replace(content: str | None) -> str:
        nonlocal changed_line
        if content is None:
            raise _FileMissing
        # Counted without overlaps, as the reference decides; lines listed with them.
        count = content.count(old)
        if count == 0:
            raise MemoryToolError(
                f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}.",
                log_message=f"No replacement was performed, old_str did not appear in {path}.",
            )
        if count > 1:
            lines = ", ".join(_occurrence_lines(content, old))
            raise MemoryToolError(
                f"No replacement was performed. Multiple occurrences of old_str `{old}` "
                f"in lines: {lines}. Please ensure it is unique",
                log_message=f"No replacement was performed: old_str occurs in lines {lines}",
            )
        changed_line = content.count("\n", 0, content.find(old))
        return access.checked_size(path, content.replace(old, new))

    new_content = await _edit(access, path, key, replace)
    lines = new_content.split("\n")
    first, last = max(0, changed_line - 2), min(len(lines), changed_line + 3)
    snippet = [numbered_line(number + 1, lines[number]) for number in range(first, last)]
    return (
        "The memory file has been edited. Here is the snippet showing the change "
        "(with line numbers):\n" + "\n".join(snippet)
    )


async def insert(access: ScopedAccess, command: BetaMemoryTool20250818InsertCommand) -> str:
    path, at = command.path, command.insert_line
    key = access.writable_key(path)

    def insert_line(content: str | None) -> str:
        if content is None:
            raise _FileMissing
        lines = split_lines(content)
        if at < 0 or at > len(lines):
            raise MemoryToolError(
                f"Invalid `insert_line` parameter: {at}. "
                f"It should be within the range [0, {len(lines)}]."
            )
        lines.insert(at, command.insert_text.rstrip("\n"))
        edited = "\n".join(lines)
        return access.checked_size(path, edited if edited.endswith("\n") else edited + "\n")

    await _edit(access, path, key, insert_line)
    return f"The file {path} has been edited."


async def _edit(
    access: ScopedAccess, path: str, key: str, transform: Callable[[str | None], str]
) -> str:
    # The root's listing (for its quota) is asked for beside the file's read: one wait.
    listing, current = await asyncio.gather(access.root_listing(key), access.store.read(key))

    def within_quota(content: str | None) -> str:
        edited = transform(content)
        access.check_room(path, key, listing, writing={key: len(edited.encode())})
        return edited

    try:
        stored = await update(access.store, key, within_quota, already_read=current)
    except _FileMissing:
        if await access.store.list(f"{key}/"):
            raise MemoryToolError(f"The path {path} is not a file.") from None
        raise MemoryToolError(
            f"The path {path} does not exist. Please provide a valid path."
        ) from None
    except PreconditionFailed:
        raise conflict(path) from None
    assert stored is not None  # the transforms never delete
    return stored.content


def _occurrence_lines(content: str, needle: str) -> list[str]:
    """1-based line of every (possibly overlapping) occurrence, as the reference reports, an
    ellipsis after MAX_LISTED_OCCURRENCES; counted on from the previous one, not from the start each
    time."""
    lines: list[str] = []
    line, counted = 1, 0
    position = content.find(needle)
    while position != -1:
        if len(lines) == MAX_LISTED_OCCURRENCES:
            return [*lines, "…"]
        line += content.count("\n", counted, position)
        counted = position
        lines.append(str(line))
        position = content.find(needle, position + 1)
    return lines
