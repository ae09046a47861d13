"""`delete` and `rename`: a move is a create-only copy, then a delete conditional on the generation
copied, so a change made meanwhile is never lost; a call's files bounded, sent a few at a time."""

from __future__ import annotations

from collections.abc import Sequence

from anthropic.types.beta import (
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818RenameCommand,
)

from app.memory.scopes import to_memory_path
from app.memory.tool.access import ScopedAccess, check_name_holds_no_secret, exists, key_of
from app.memory.tool.errors import MemoryToolError, conflict
from app.storage.store import CREATE_ONLY, ObjectInfo, PreconditionFailed, StoredObject, at_most

MAX_FILES_PER_CALL = 100
MAX_IN_FLIGHT = 8


async def delete(access: ScopedAccess, command: BetaMemoryTool20250818DeleteCommand) -> str:
    path = command.path
    key = key_of(path)
    scope, store = access.scope, access.store
    if key == "":
        raise MemoryToolError("Cannot delete the /memories directory itself")
    # The user's (or thread's) whole directory may go: "forget everything about me".
    if not (scope.can_write(key) or scope.is_writable_root(key)):
        access.deny(path, writing=True)
    if not scope.is_writable_root(key) and await store.delete(key):
        return f"Successfully deleted {path}"
    objects = await store.list(f"{key}/")
    if not objects:
        raise MemoryToolError(f"The path {path} does not exist")
    _check_count("delete", path, objects)
    await at_most(MAX_IN_FLIGHT, objects, lambda obj: store.delete(obj.key))
    return f"Successfully deleted {path}"


async def rename(access: ScopedAccess, command: BetaMemoryTool20250818RenameCommand) -> str:
    old_path, new_path = command.old_path, command.new_path
    old_key, new_key = key_of(old_path), key_of(new_path)
    if old_key == "":
        raise MemoryToolError("Cannot rename the /memories directory itself")
    for path, key in ((old_path, old_key), (new_path, new_key)):
        if not access.scope.can_write(key):
            access.deny(path, writing=True)
    check_name_holds_no_secret(new_path)
    destination = await access.root_listing(new_key)
    if exists(new_key, destination):
        raise MemoryToolError(f"The destination {new_path} already exists")
    moves = await _sources(access, old_key)
    if not moves:
        raise MemoryToolError(f"The path {old_path} does not exist")
    _check_count("rename", old_path, moves)
    if new_key.startswith(f"{old_key}/"):
        raise MemoryToolError(f"Cannot move {old_path} into itself ({new_path})")
    same_root = access.scope.root_of(old_key) == access.scope.root_of(new_key)
    adding = 0 if same_root else len(moves)
    access.check_destination(new_path, new_key, destination, adding=adding)
    if not same_root:
        moved = {new_key + obj.key[len(old_key) :]: obj.size for obj in moves}
        access.check_room(new_path, new_key, destination, writing=moved)
    await at_most(
        MAX_IN_FLIGHT,
        moves,
        lambda obj: _move(access, obj, new_key + obj.key[len(old_key) :], old_path),
    )
    return f"Successfully renamed {old_path} to {new_path}"


async def _sources(access: ScopedAccess, key: str) -> list[StoredObject | ObjectInfo]:
    """The file at `key` (read), or every file under it (listed, read when moved)."""
    stored = await access.store.read(key)
    if stored is not None:
        return [stored]
    return list(await access.store.list(f"{key}/"))


def _check_count(command: str, path: str, objects: Sequence[StoredObject | ObjectInfo]) -> None:
    if len(objects) > MAX_FILES_PER_CALL:
        raise MemoryToolError(
            f"Cannot {command} {path}: it holds {len(objects)} files, and one {command} "
            f"handles at most {MAX_FILES_PER_CALL}. Do it in parts: its subdirectories, "
            "or its files, one call each."
        )


async def _move(
    access: ScopedAccess, listed: StoredObject | ObjectInfo, new_key: str, old_path: str
) -> None:
    # Copy, then delete the original only if unchanged since the copy was taken;
    # otherwise undo the copy rather than lose the newer change.
    store = access.store
    source = listed if isinstance(listed, StoredObject) else await store.read(listed.key)
    if source is None:
        return  # deleted since it was listed: nothing to move
    try:
        generation = await store.write(new_key, source.content, if_generation=CREATE_ONLY)
    except PreconditionFailed:
        raise MemoryToolError(f"The destination {to_memory_path(new_key)} already exists") from None
    try:
        await store.delete(source.key, if_generation=source.generation)
    except PreconditionFailed:
        await store.delete(new_key, if_generation=generation)
        raise conflict(old_path) from None
