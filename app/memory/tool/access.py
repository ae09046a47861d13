"""The memory one conversation may use: path checks, limits and collisions. Every refusal reads
the same whether or not anything exists at the path, so the model can never probe other people's
memory."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from app.memory.scopes import ScopeRules, to_key, to_memory_path
from app.memory.tool.errors import MemoryToolError
from app.observability.redaction import redact_secret_shapes
from app.storage.store import ObjectInfo, ObjectStore

# Memories are read back into prompts: a file larger than this is a sign of hoarding.
MAX_FILE_BYTES = 100 * 1024
# Per writable root (the user's directory, the thread's directory, a channel's).
MAX_FILES_PER_DIRECTORY = 200
# Bytes per writable root: hundreds of ordinary notes, more than Claude could read back in
# a turn; 200 files of 100 KB would be 20 MB read on every listing, export and erasure.
MAX_BYTES_PER_DIRECTORY = 1024 * 1024


@dataclass(frozen=True)
class ScopedAccess:
    """A store as one conversation (`scope`) may use it, within Orion's limits."""

    store: ObjectStore
    scope: ScopeRules
    max_file_bytes: int = MAX_FILE_BYTES
    max_files_per_directory: int = MAX_FILES_PER_DIRECTORY
    max_bytes_per_directory: int = MAX_BYTES_PER_DIRECTORY

    def writable_key(self, path: str) -> str:
        key = key_of(path)
        if not self.scope.can_write(key):
            self.deny(path, writing=True)
        return key

    def deny(self, path: str, *, writing: bool) -> NoReturn:
        readable = ", ".join(to_memory_path(root) for root in self.scope.roots)
        writable = ", ".join(to_memory_path(root) for root in self.scope.writable_roots)
        if writing and self.scope.can_read(key_of(path)):
            raise MemoryToolError(f"Access denied: {path} is read-only. Writable: {writable}.")
        raise MemoryToolError(
            f"Access denied: {path} is outside the memory this conversation may use. "
            f"Readable: {readable}. Writable: {writable}."
        )

    async def root_listing(self, key: str) -> list[ObjectInfo]:
        """Every object in the writable root holding `key`: for limits and collisions."""
        root = self.scope.root_of(key)
        assert root is not None  # callers checked can_write
        return await self.store.list(root)

    def check_destination(
        self, path: str, key: str, root_objects: list[ObjectInfo], *, adding: int
    ) -> None:
        """No file where `key` needs a directory, and room for `adding` more files."""
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

    def check_room(
        self, path: str, key: str, root_objects: list[ObjectInfo], *, writing: dict[str, int]
    ) -> None:
        """Room in the writable root holding `key` for the files `writing` (key → bytes,
        replacing what is there): refused when it would then hold more than its quota and
        more than it holds now (a root already over it may still shrink)."""
        held = {obj.key: obj.size for obj in root_objects}
        before = sum(held.values())
        after = before + sum(size - held.get(written, 0) for written, size in writing.items())
        if after > self.max_bytes_per_directory and after > before:
            root = to_memory_path(self.scope.root_of(key) or "")
            limit = self.max_bytes_per_directory // 1024
            raise MemoryToolError(
                f"Cannot write {path}: {root} would hold {after // 1024} KB, and a memory "
                f"directory may hold at most {limit} KB. Merge, shorten or delete files first.",
                log_message=f"Cannot write {path}: {root} over its {limit} KB quota",
            )

    def checked_size(self, path: str, content: str) -> str:
        size = len(content.encode("utf-8"))
        if size > self.max_file_bytes:
            raise MemoryToolError(
                f"Cannot write {path}: {size} bytes is over the {self.max_file_bytes // 1024} KB "
                "limit for a memory file. Keep memories concise: summarise, or split them "
                "into several files."
            )
        return content


def key_of(path: str) -> str:
    """The store key of a `/memories/...` path, or an error result naming what is wrong."""
    try:
        return to_key(path)
    except ValueError as exc:
        raise MemoryToolError(str(exc)) from None


def check_name_holds_no_secret(path: str) -> None:
    """Refuse a new file name with a secret in it (`notes/ghp_….md`): a name is listed to
    the model, shown and logged, and scrubbing it would leave a file the model cannot find
    by the name it gave, so the model is told, and picks another."""
    redacted = redact_secret_shapes(path)
    if redacted != path:
        raise MemoryToolError(
            f"Cannot name a file {redacted}: the name holds what looks like a secret (a "
            "token, key or password). File names are shown in every later conversation "
            "and to the person, so name the file after what it is about, and keep the "
            "secret itself out of memory."
        )


def exists(key: str, objects: list[ObjectInfo]) -> bool:
    """True when `key` is a file or a directory among `objects`."""
    return any(obj.key == key or obj.key.startswith(f"{key}/") for obj in objects)
