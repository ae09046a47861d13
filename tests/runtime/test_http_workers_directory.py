"""Where the workers' siblings directory goes (app/http_workers.py): somewhere a Unix
socket's path fits (at most 107 bytes), whatever TMPDIR says."""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.http_workers import MAX_SOCKET_PATH, _short_temporary_directory


@pytest.fixture
def tmpdir_set_to(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    def set_to(directory: Path) -> None:
        monkeypatch.setenv("TMPDIR", str(directory))
        monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again

    yield set_to


@pytest.mark.parametrize("depth", [1, 100], ids=["short", "too_deep_for_a_socket"])
def test_a_worker_can_listen_in_the_directory_whatever_tmpdir_says(
    tmp_path: Path, tmpdir_set_to: Callable[[Path], None], depth: int
) -> None:
    configured = tmp_path / ("d" * depth)
    configured.mkdir()
    tmpdir_set_to(configured)

    chosen = _short_temporary_directory()
    siblings = tempfile.mkdtemp(prefix="orion-workers-", dir=chosen)
    try:
        path = os.path.join(siblings, "4194304.sock")
        assert len(path.encode()) <= MAX_SOCKET_PATH
        with socket.socket(socket.AF_UNIX) as listening:
            listening.bind(path)  # what the worker does; too long a path raises OSError
        if len(str(configured)) < 60:
            assert chosen == str(configured), "TMPDIR is kept where it leaves room"
    finally:
        for name in os.listdir(siblings):
            os.unlink(os.path.join(siblings, name))
        os.rmdir(siblings)
