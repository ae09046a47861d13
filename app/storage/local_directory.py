"""Objects in a local directory (`MEMORY_DIR`) with the bucket's semantics (docs/architecture.md,
"Inside app/storage"); inline on the event loop, so a generation check and its `os.replace`
cannot be interleaved or cancelled apart."""

from __future__ import annotations

import builtins
import errno
import os
import stat
import time
from datetime import UTC, datetime
from pathlib import Path

from app.storage.owner_only_files import TEMP_PREFIX, prune_empty_dirs, replace_file
from app.storage.store import (
    CREATE_ONLY,
    ObjectInfo,
    PreconditionFailed,
    StoredObject,
    StoreError,
    StoreUnavailable,
)

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class LocalDirectoryStore:
    """A `ObjectStore` over a local directory, for development."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        # Paths are plain strings below: pathlib cost several µs per key, per operation.
        self._root = str(self.directory)

    def __repr__(self) -> str:
        return f"LocalDirectoryStore({str(self.directory)!r})"

    async def connect(self) -> None:
        """Nothing to prepare: the directory is created on the first write."""

    async def close(self) -> None:
        """Nothing to release."""

    # -- the operations: nothing awaited, so nothing runs between a check and its change --

    def _path(self, key: str) -> str:
        # Keys normally come from `paths.to_key`; the store still refuses anything that
        # could leave its directory or hit its temporary files.
        segments = key.split("/")
        if not key or "\\" in key or "\0" in key or any(s in ("", ".", "..") for s in segments):
            raise ValueError(f"invalid object key: {key!r}")
        if any(s.startswith(TEMP_PREFIX) for s in segments):
            raise ValueError(f"invalid object key: {key!r}")
        return f"{self._root}/{key}"

    async def read(self, key: str) -> StoredObject | None:
        path = self._path(key)
        try:
            fd = os.open(path, os.O_RDONLY | _O_NOFOLLOW)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a symlink: not something this store wrote
                return None
            raise StoreUnavailable(f"cannot read {key}: {exc.strerror}") from exc
        # fstat of the descriptor we read: content and generation belong together even if
        # a writer replaces the file meanwhile.
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            return None  # a directory is not an object
        with os.fdopen(fd, "rb") as file:
            data = file.read()
        return StoredObject(
            key=key,
            content=data.decode("utf-8", errors="replace"),
            generation=_generation(info),
            updated=_updated(info),
            size=len(data),
        )

    def _current_generation(self, path: str) -> int | None:
        try:
            info = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        # A directory (or anything else) is not an object: as in a bucket, where a
        # "directory" is only a prefix of other keys.
        return _generation(info) if stat.S_ISREG(info.st_mode) else None

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        path = self._path(key)
        current = self._current_generation(path)
        _check_precondition(key, current, if_generation)
        generation = max(time.time_ns(), (current or 0) + 1)
        try:
            # Read back: a file system with coarse timestamps may have rounded it.
            return _generation(replace_file(path, content.encode(), modified_ns=generation))
        except (NotADirectoryError, FileExistsError, IsADirectoryError) as exc:
            # GCS allows `a` and `a/b` side by side; a file system does not.
            raise StoreError(
                f"cannot write {key}: a file and a directory cannot share a name"
            ) from exc
        except OSError as exc:
            raise StoreUnavailable(f"cannot write {key}: {exc.strerror}") from exc

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        path = self._path(key)
        current = self._current_generation(path)
        if current is None:
            return False
        _check_precondition(key, current, if_generation)
        try:
            os.unlink(path)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise StoreUnavailable(f"cannot delete {key}: {exc.strerror}") from exc
        # As in a bucket, a "directory" exists only while something is in it.
        prune_empty_dirs(os.path.dirname(path), stop_at=self._root)
        return True

    async def list(self, prefix: str) -> builtins.list[ObjectInfo]:
        return self._list(prefix)

    # builtins.list: inside the class body, `list` names the method above.
    def _list(self, prefix: str) -> builtins.list[ObjectInfo]:
        directory_part = prefix.rpartition("/")[0]
        start = self._path(directory_part) if directory_part else self._root
        found: list[ObjectInfo] = []
        for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
            dirnames[:] = [name for name in dirnames if not name.startswith(".")]
            relative_dir = os.path.relpath(dirpath, self._root).replace(os.sep, "/")
            for name in filenames:
                if name.startswith("."):
                    continue  # temporary files of writes in progress
                key = name if relative_dir == "." else f"{relative_dir}/{name}"
                if not key.startswith(prefix):
                    continue
                try:
                    info = os.lstat(os.path.join(dirpath, name))
                except FileNotFoundError:
                    continue  # deleted while we walked
                if stat.S_ISREG(info.st_mode):
                    found.append(ObjectInfo(key, info.st_size, _updated(info), _generation(info)))
        return sorted(found, key=lambda item: item.key)


def directory_problem(directory: Path | str) -> str | None:
    """Why this store cannot keep objects in `directory` (a phrase naming no path or error), or
    None: a look only, cheap enough for every readiness probe; creatable is fine."""
    path = Path(directory)
    while not path.exists():
        if path.is_symlink() or path.parent == path:
            return "cannot be created"
        path = path.parent  # the nearest existing ancestor must let us create it
    if not path.is_dir():
        return "is not a directory" if path == Path(directory) else "cannot be created"
    if not os.access(path, os.W_OK | os.X_OK):
        return "is not writable"
    return None


def prepare_directory(directory: Path | str) -> str | None:
    """Create `directory` if needed and write and remove a file in it, at start-up so no person
    is the first to find out: None, or why not (a phrase and the system's reason)."""
    path = Path(directory)
    try:
        # Created as the store creates it (owner-only), with a file written the same way.
        probe = f"{path}/{TEMP_PREFIX}write-check-{os.getpid()}"
        replace_file(probe, b"", modified_ns=time.time_ns())
        os.unlink(probe)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return f"{directory_problem(path) or 'cannot be written to'} ({reason})"
    return None


def _check_precondition(key: str, current: int | None, if_generation: int | None) -> None:
    expected = None if if_generation == CREATE_ONLY else if_generation
    if if_generation is not None and current != expected:
        raise PreconditionFailed(key, if_generation)


def _generation(info: os.stat_result) -> int:
    return max(info.st_mtime_ns, 1)  # 0 means "absent" in this interface


def _updated(info: os.stat_result) -> datetime:
    return datetime.fromtimestamp(info.st_mtime_ns / 1e9, tz=UTC)
