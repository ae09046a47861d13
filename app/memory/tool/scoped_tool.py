"""Claude's memory tool (`memory_20250818`), confined to one conversation's memory.

One `ScopedMemoryTool` serves one turn of one user in one thread. The model may read
`/memories/global/`, and read and write `/memories/users/<user>/` and
`/memories/sessions/<thread>/`; every other path is an error result that reveals nothing
about what exists there. Results and errors read exactly as those of the SDK's reference
implementation (`BetaLocalFilesystemMemoryTool`), which the model knows; the few
differences come from the store being a bucket (see `views`) or from Orion's limits.

Every write is conditional on the generation that was read, so two turns editing the
same file concurrently (two Cloud Run instances, say) never lose each other's change.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import NoReturn, cast

from anthropic.lib.tools import BetaFunctionToolResultType
from anthropic.lib.tools._beta_builtin_memory_tool import _split_lines_keeping_cr
from anthropic.tools import BetaAsyncAbstractMemoryTool
from anthropic.types.beta import (
    BetaCacheControlEphemeralParam,
    BetaMemoryTool20250818Command,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)
from pydantic import BaseModel, ValidationError

from app.memory.scopes import MemoryScope, to_key, to_memory_path
from app.memory.tool.errors import MemoryToolError
from app.memory.tool.guide import memory_tool_guide
from app.memory.tool.rendering import numbered_line, render_directory, render_file
from app.memory.tool.tracing import traced_command, traced_fields
from app.storage.store import (
    CREATE_ONLY,
    ObjectInfo,
    ObjectStore,
    PreconditionFailed,
    StoredObject,
    StoreError,
    StoreUnavailable,
    update,
)

__all__ = ["MAX_FILES_PER_DIRECTORY", "MAX_FILE_BYTES", "ScopedMemoryTool", "memory_tool_guide"]

# Memories are read back into prompts: a file larger than this is a sign of hoarding.
MAX_FILE_BYTES = 100 * 1024
# Per writable root (the user's directory, the thread's directory).
MAX_FILES_PER_DIRECTORY = 200

_COMMANDS: Mapping[str, type[BaseModel]] = {
    "view": BetaMemoryTool20250818ViewCommand,
    "create": BetaMemoryTool20250818CreateCommand,
    "str_replace": BetaMemoryTool20250818StrReplaceCommand,
    "insert": BetaMemoryTool20250818InsertCommand,
    "delete": BetaMemoryTool20250818DeleteCommand,
    "rename": BetaMemoryTool20250818RenameCommand,
}


class _FileMissing(Exception):
    """Raised inside an update's transform: there is no file to edit."""


class ScopedMemoryTool(BetaAsyncAbstractMemoryTool):
    """The six memory commands over a `ObjectStore`, limited to a `MemoryScope`."""

    def __init__(
        self,
        store: ObjectStore,
        scope: MemoryScope,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
        max_files_per_directory: int = MAX_FILES_PER_DIRECTORY,
        cache_control: BetaCacheControlEphemeralParam | None = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.store = store
        self.scope = scope
        self.max_file_bytes = max_file_bytes
        self.max_files_per_directory = max_files_per_directory

    async def call(self, input: object) -> BetaFunctionToolResultType:
        """Validate the model's input (a wrong shape is an error result, like any other),
        then run the command inside its span and log line."""
        name = input.get("command") if isinstance(input, Mapping) else None
        label = name if isinstance(name, str) and name in _COMMANDS else "invalid"
        with traced_command(label, traced_fields(input)):
            command = _parse_command(input)
            try:
                return await self.execute(command)
            except StoreUnavailable as exc:
                raise MemoryToolError(
                    "Memory storage is temporarily unavailable, so this memory command did "
                    "not run. Continue without it, or try again later.",
                    log_message=f"store unavailable: {exc}",
                    internal=True,
                ) from exc
            except StoreError as exc:
                raise MemoryToolError(
                    f"The memory command failed: {exc}", log_message=str(exc), internal=True
                ) from exc

    # -- commands -----------------------------------------------------------------------

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path = command.path
        key = _key_of(path)
        if self.scope.can_read(key):
            if not self.scope.is_root(key):
                stored = await self.store.read(key)
                if stored is not None:
                    return render_file(path, stored.content, command.view_range)
            objects = await self.store.list(f"{key}/")
        elif key == "" or self.scope.roots_under(key):
            # Shared directories above this conversation's roots: show only those roots.
            listings = await asyncio.gather(
                *(self.store.list(root) for root in self.scope.roots_under(key))
            )
            objects = [obj for listing in listings for obj in listing]
        else:
            self._deny(path, writing=False)
        if not objects and key != "":
            raise MemoryToolError(f"The path {path} does not exist. Please provide a valid path.")
        return render_directory(path, key, objects)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        path = command.path
        key = self._writable_key(path)
        self._check_size(path, command.file_text)
        existing = await self._root_listing(key)
        if _exists(key, existing):
            raise MemoryToolError(f"File {path} already exists")
        self._check_destination(path, key, existing, adding=1)
        try:
            await self.store.write(key, command.file_text, if_generation=CREATE_ONLY)
        except PreconditionFailed:
            raise MemoryToolError(f"File {path} already exists") from None
        return f"File created successfully at: {path}"

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path, old, new = command.path, command.old_str, command.new_str
        key = self._writable_key(path)
        changed_line = 0

        def replace(content: str | None) -> str:
            nonlocal changed_line
            if content is None:
                raise _FileMissing
            # Counted without overlaps, as the reference decides; lines listed with them.
            count = content.count(old)
            if count == 0:
                raise MemoryToolError(
                    f"No replacement was performed, old_str `{old}` did not appear verbatim "
                    f"in {path}.",
                    log_message=f"No replacement was performed, old_str did not appear in {path}.",
                )
            if count > 1:
                lines = ", ".join(map(str, _occurrence_lines(content, old)))
                raise MemoryToolError(
                    f"No replacement was performed. Multiple occurrences of old_str `{old}` "
                    f"in lines: {lines}. Please ensure it is unique",
                    log_message=f"No replacement was performed: old_str occurs in lines {lines}",
                )
            changed_line = content.count("\n", 0, content.find(old))
            return self._checked_size(path, content.replace(old, new))

        new_content = await self._edit(path, key, replace)
        lines = new_content.split("\n")
        first, last = max(0, changed_line - 2), min(len(lines), changed_line + 3)
        snippet = [numbered_line(number + 1, lines[number]) for number in range(first, last)]
        return (
            "The memory file has been edited. Here is the snippet showing the change "
            "(with line numbers):\n" + "\n".join(snippet)
        )

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        path, at = command.path, command.insert_line
        key = self._writable_key(path)

        def insert(content: str | None) -> str:
            if content is None:
                raise _FileMissing
            lines = _split_lines_keeping_cr(content)
            if at < 0 or at > len(lines):
                raise MemoryToolError(
                    f"Invalid `insert_line` parameter: {at}. "
                    f"It should be within the range [0, {len(lines)}]."
                )
            lines.insert(at, command.insert_text.rstrip("\n"))
            edited = "\n".join(lines)
            return self._checked_size(path, edited if edited.endswith("\n") else edited + "\n")

        await self._edit(path, key, insert)
        return f"The file {path} has been edited."

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        path = command.path
        key = _key_of(path)
        if key == "":
            raise MemoryToolError("Cannot delete the /memories directory itself")
        # The user's (or thread's) whole directory may go: "forget everything about me".
        if not (self.scope.can_write(key) or self.scope.is_writable_root(key)):
            self._deny(path, writing=True)
        if not self.scope.is_writable_root(key) and await self.store.delete(key):
            return f"Successfully deleted {path}"
        objects = await self.store.list(f"{key}/")
        if not objects:
            raise MemoryToolError(f"The path {path} does not exist")
        await asyncio.gather(*(self.store.delete(obj.key) for obj in objects))
        return f"Successfully deleted {path}"

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old_path, new_path = command.old_path, command.new_path
        old_key, new_key = _key_of(old_path), _key_of(new_path)
        if old_key == "":
            raise MemoryToolError("Cannot rename the /memories directory itself")
        for path, key in ((old_path, old_key), (new_path, new_key)):
            if not self.scope.can_write(key):
                self._deny(path, writing=True)
        destination = await self._root_listing(new_key)
        if _exists(new_key, destination):
            raise MemoryToolError(f"The destination {new_path} already exists")
        moves = await self._sources(old_key)
        if not moves:
            raise MemoryToolError(f"The path {old_path} does not exist")
        if new_key.startswith(f"{old_key}/"):
            raise MemoryToolError(f"Cannot move {old_path} into itself ({new_path})")
        same_root = self.scope.root_of(old_key) == self.scope.root_of(new_key)
        adding = 0 if same_root else len(moves)
        self._check_destination(new_path, new_key, destination, adding=adding)
        await asyncio.gather(
            *(self._move(obj, new_key + obj.key[len(old_key) :], old_path) for obj in moves)
        )
        return f"Successfully renamed {old_path} to {new_path}"

    # -- helpers --------------------------------------------------------------------------

    def _writable_key(self, path: str) -> str:
        key = _key_of(path)
        if not self.scope.can_write(key):
            self._deny(path, writing=True)
        return key

    def _deny(self, path: str, *, writing: bool) -> NoReturn:
        # Same answer whether or not anything exists there: no probing other people's memory.
        readable = ", ".join(to_memory_path(root) for root in self.scope.roots)
        writable = ", ".join(to_memory_path(root) for root in self.scope.writable_roots)
        key = _key_of(path)
        if writing and self.scope.can_read(key):
            raise MemoryToolError(f"Access denied: {path} is read-only. Writable: {writable}.")
        raise MemoryToolError(
            f"Access denied: {path} is outside the memory this conversation may use. "
            f"Readable: {readable}. Writable: {writable}."
        )

    async def _root_listing(self, key: str) -> list[ObjectInfo]:
        """Every object in the writable root holding `key`: for limits and collisions."""
        root = self.scope.root_of(key)
        assert root is not None  # callers checked can_write
        return await self.store.list(root)

    def _check_destination(
        self, path: str, key: str, root_objects: list[ObjectInfo], *, adding: int
    ) -> None:
        keys = {obj.key for obj in root_objects}
        root = self.scope.root_of(key) or ""
        parts = key[len(root) :].split("/")
        for depth in range(1, len(parts)):
            parent = root + "/".join(parts[:depth])
            if parent in keys:
                raise MemoryToolError(
                    f"Cannot create {path}: {to_memory_path(parent)} is a file, not a directory"
                )
        if adding and len(keys) + adding > self.max_files_per_directory:
            raise MemoryToolError(
                f"Cannot create {path}: {to_memory_path(root)} already holds {len(keys)} files, "
                f"and a memory directory may hold at most {self.max_files_per_directory}. "
                "Merge or delete files first."
            )

    def _check_size(self, path: str, content: str) -> None:
        size = len(content.encode("utf-8"))
        if size > self.max_file_bytes:
            raise MemoryToolError(
                f"Cannot write {path}: {size} bytes is over the {self.max_file_bytes // 1024} KB "
                "limit for a memory file. Keep memories concise: summarise, or split them "
                "into several files."
            )

    def _checked_size(self, path: str, content: str) -> str:
        self._check_size(path, content)
        return content

    async def _edit(self, path: str, key: str, transform: Callable[[str | None], str]) -> str:
        try:
            content = await update(self.store, key, transform)
        except _FileMissing:
            if await self.store.list(f"{key}/"):
                raise MemoryToolError(f"The path {path} is not a file.") from None
            raise MemoryToolError(
                f"The path {path} does not exist. Please provide a valid path."
            ) from None
        except PreconditionFailed:
            raise _conflict(path) from None
        assert content is not None  # the transforms never delete
        return content

    async def _sources(self, key: str) -> list[StoredObject]:
        """The file at `key`, or every file under it, with content, for a move."""
        stored = await self.store.read(key)
        if stored is not None:
            return [stored]
        objects = await self.store.list(f"{key}/")
        reads = await asyncio.gather(*(self.store.read(obj.key) for obj in objects))
        return [obj for obj in reads if obj is not None]

    async def _move(self, source: StoredObject, new_key: str, old_path: str) -> None:
        # A bucket cannot rename: copy, then delete the original only if unchanged since
        # the copy was taken; otherwise undo the copy rather than lose the newer change.
        try:
            generation = await self.store.write(new_key, source.content, if_generation=CREATE_ONLY)
        except PreconditionFailed:
            raise MemoryToolError(
                f"The destination {to_memory_path(new_key)} already exists"
            ) from None
        try:
            await self.store.delete(source.key, if_generation=source.generation)
        except PreconditionFailed:
            await self.store.delete(new_key, if_generation=generation)
            raise _conflict(old_path) from None


def _key_of(path: str) -> str:
    try:
        return to_key(path)
    except ValueError as exc:
        raise MemoryToolError(str(exc)) from None


def _exists(key: str, objects: list[ObjectInfo]) -> bool:
    """True when `key` is a file or a directory among `objects`."""
    return any(obj.key == key or obj.key.startswith(f"{key}/") for obj in objects)


def _occurrence_lines(content: str, needle: str) -> list[int]:
    """1-based line of every (possibly overlapping) occurrence, as the reference reports."""
    lines: list[int] = []
    position = content.find(needle)
    while position != -1:
        lines.append(content.count("\n", 0, position) + 1)
        position = content.find(needle, position + 1)
    return lines


def _conflict(path: str) -> MemoryToolError:
    return MemoryToolError(
        f"The file {path} was changed by someone else at the same time, so this change was "
        "not made. View it again and retry."
    )


def _parse_command(command_input: object) -> BetaMemoryTool20250818Command:
    """The typed command, or an error result that names what is wrong with the input."""
    if not isinstance(command_input, Mapping):
        raise MemoryToolError("Invalid memory tool input: expected a JSON object with a `command`")
    name = command_input.get("command")
    model = _COMMANDS.get(name) if isinstance(name, str) else None
    if model is None:
        expected = ", ".join(_COMMANDS)
        raise MemoryToolError(
            f"Invalid memory tool input: unknown command {name!r}; expected one of {expected}"
        )
    try:
        # Strict: "3" is not a line number and 3 is not a path.
        parsed = model.model_validate(dict(command_input), strict=True)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, error['loc'])) or 'input'}: {error['msg']}"
            for error in exc.errors(include_input=False, include_url=False)
        )
        raise MemoryToolError(f"Invalid input for memory command {name!r}: {problems}") from None
    return cast(BetaMemoryTool20250818Command, parsed)
