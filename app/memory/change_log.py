"""What one turn changed in a person's memory, as the store confirmed it: each file's before and its
generation after, what an undo writes over (docs/memory-notes.md)."""

from __future__ import annotations

from dataclasses import dataclass

from app.storage.store import CREATE_ONLY, ObjectStore, PreconditionFailed, StoredObject, StoreLayer

# A delete the layer made conditional, retried when another writer got in between.
_DELETE_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class MemoryChange:
    """One file's net change over a turn: `before` None means the turn created it,
    `after_generation` None means the turn deleted it."""

    key: str
    before: str | None
    after: str | None  # the content the turn left (as written, before any redaction)
    after_generation: int | None

    @property
    def created(self) -> bool:
        return self.before is None

    @property
    def deleted(self) -> bool:
        return self.after_generation is None


@dataclass
class _Entry:
    before: str | None
    after: str | None = None
    after_generation: int | None = None


class ChangeLog:
    """Every confirmed change of one turn, by key, in the order first changed."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def has(self, key: str) -> bool:
        return key in self._entries

    def begin(self, key: str, before: str | None) -> None:
        """A change to `key` is confirmed; `before` is what the first one replaced."""
        self._entries.setdefault(key, _Entry(before))

    def generation_after(self, key: str) -> int | None:
        """The generation the turn's last change to `key` left; None once it deleted it."""
        return self._entries[key].after_generation

    def written(self, key: str, content: str, generation: int) -> None:
        entry = self._entries[key]
        entry.after, entry.after_generation = content, generation

    def deleted(self, key: str) -> None:
        entry = self._entries[key]
        entry.after, entry.after_generation = None, None

    def changes(self) -> list[MemoryChange]:
        """The net changes: a file created then deleted, or written back to what it was,
        is no change at all."""
        return [
            MemoryChange(key, entry.before, entry.after, entry.after_generation)
            for key, entry in self._entries.items()
            if entry.before != entry.after
        ]


class RecordingStore(StoreLayer):
    """An `ObjectStore` that records, in `log`, every change it confirms."""

    def __init__(self, inner: ObjectStore, log: ChangeLog) -> None:
        super().__init__(inner)
        self.log = log
        self._read: dict[str, StoredObject | None] = {}

    async def read(self, key: str) -> StoredObject | None:
        stored = await self.inner.read(key)
        self._read[key] = stored
        return stored

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        before = await self._before_write(key, if_generation)
        generation = await self.inner.write(key, content, if_generation=if_generation)
        self.log.begin(key, before.content if before is not None else None)
        self.log.written(key, content, generation)
        return generation

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        if if_generation is None and self.log.has(key):
            # Changed by this turn already: only what it left may go, never a later change by
            # someone else (the log keeps only the turn's before: no undo could bring it back).
            if_generation = self.log.generation_after(key)
        if if_generation is not None:
            seen = self._read.get(key)
            if not self.log.has(key) and (seen is None or seen.generation != if_generation):
                seen = await self.inner.read(key)  # what goes, if the delete goes through
            deleted = await self.inner.delete(key, if_generation=if_generation)
            if deleted:
                self._record_delete(key, seen)
            return deleted
        # Unconditional: read what goes, and delete exactly that.
        for attempt in range(1, _DELETE_ATTEMPTS + 1):
            current = await self.inner.read(key)
            if current is None:
                return False
            try:
                deleted = await self.inner.delete(key, if_generation=current.generation)
            except PreconditionFailed:
                if attempt == _DELETE_ATTEMPTS:
                    raise
                continue
            if deleted:
                self._record_delete(key, current)
            return deleted
        raise AssertionError("unreachable")  # pragma: no cover

    async def _before_write(self, key: str, if_generation: int | None) -> StoredObject | None:
        """What the write replaces (when it is the turn's first change to `key`)."""
        if self.log.has(key) or if_generation == CREATE_ONLY:
            return None
        seen = self._read.get(key)
        if seen is not None and seen.generation == if_generation:
            return seen
        return await self.inner.read(key)

    def _record_delete(self, key: str, before: StoredObject | None) -> None:
        self.log.begin(key, before.content if before is not None else None)
        self.log.deleted(key)
