"""Files only their owner may read (directories 0o700, files 0o600, whatever the umask: memories
are personal), each written whole through one `os.replace`: never half a file."""

from __future__ import annotations

import contextlib
import os
import uuid

FILE_MODE = 0o600
DIR_MODE = 0o700
TEMP_PREFIX = ".tmp-"  # temporary files, never listed as objects


def replace_file(
    path: str, data: bytes, *, modified_ns: int, replace: bool = True
) -> os.stat_result:
    """Write `data` to `path` atomically, with its modification time set; the new file's
    status (its time may have been rounded by the file system). `replace=False`: only if
    `path` does not exist (FileExistsError otherwise), decided by the same atomic step."""
    directory = os.path.dirname(path)
    for attempt in range(3):
        make_private_dirs(directory)
        temp = f"{directory}/{TEMP_PREFIX}{uuid.uuid4().hex}"
        try:
            fd = os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE)
        except FileNotFoundError:
            # A concurrent delete pruned the (then empty) directory: make it again.
            if attempt == 2:
                raise
            continue
        try:
            try:
                os.fchmod(fd, FILE_MODE)
                _write_all(fd, data)
                os.utime(fd, ns=(modified_ns, modified_ns))
            finally:
                os.close(fd)
            if replace:
                os.replace(temp, path)
            else:
                os.link(temp, path)  # fails if `path` exists, where os.replace would not
                os.unlink(temp)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            raise
        return os.lstat(path)
    raise AssertionError("unreachable")  # pragma: no cover


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def make_private_dirs(directory: str) -> None:
    """Create `directory` and its missing parents (the memory root's too, e.g. a fresh
    `.orion/memories`), each with mode 0o700 whatever the umask (`os.makedirs(mode=...)`
    applies the mode to the last one only)."""
    missing: list[str] = []
    current = directory
    while current and not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, DIR_MODE)
            os.chmod(path, DIR_MODE)


def prune_empty_dirs(directory: str, *, stop_at: str) -> None:
    current = directory
    inside = os.path.join(stop_at, "")  # the root with a trailing separator
    while current.startswith(inside) and current != stop_at:
        try:
            os.rmdir(current)
        except OSError:
            return  # not empty (or already gone): nothing more to prune
        current = os.path.dirname(current)
