"""Whether every worker of an instance is ready: the markers /readyz counts.

A worker whose own checks pass leaves `{pid}.ready` in the siblings' directory
(app/runtime/worker_siblings.py); /readyz counts the markers of workers still running
(app/readiness.py). Here the workers are `WorkerSiblings` of this test process, each with
its own name; a dead worker is a real process that has exited, and the hostile markers are
what anything else able to write the directory could leave there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.runtime.worker_siblings import READY_SUFFIX, WorkerSiblings


def _exited_pid() -> int:
    """The pid of a process that has run and exited (and been reaped)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def _names(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir())


async def test_each_worker_counts_once_it_says_it_is_ready_and_no_longer_once_closed(
    tmp_path: Path,
) -> None:
    a, b = WorkerSiblings(tmp_path, name="a"), WorkerSiblings(tmp_path, name="b")
    assert a.ready_workers() == 0, "a worker that has not said so is not counted"
    a.mark_ready()
    assert a.ready_workers() == b.ready_workers() == 1
    b.mark_ready()
    b.mark_ready()  # saying it twice is one worker
    assert a.ready_workers() == 2
    assert (tmp_path / "a.ready").read_text() == str(os.getpid())

    await b.close()
    assert a.ready_workers() == 1
    assert _names(tmp_path) == ["a.ready"]
    await a.close()
    assert _names(tmp_path) == []


def test_the_marker_of_a_worker_that_was_killed_does_not_count(tmp_path: Path) -> None:
    """A worker killed outright cannot remove its marker; its pid no longer runs."""
    (tmp_path / "killed.ready").write_text(str(_exited_pid()))
    alive = WorkerSiblings(tmp_path, name="alive")
    alive.mark_ready()
    assert alive.ready_workers() == 1


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"not a pid",
        b"0",  # os.kill(0, 0) would ask about the whole process group
        b"-1",  # and -1 about every process there is
        b"-4242",
        b"99999999999999999999999",  # past what os.kill takes
        b"4194305",  # past Linux's largest pid
        b"1" * (1024 * 1024),  # a marker of a megabyte: only its beginning is read
        "１２３".encode(),  # fullwidth digits: int() takes them in a str, not in bytes
        b"\x00\xff\xfe",
    ],
    ids=repr,
)
def test_a_marker_that_no_worker_wrote_does_not_count(tmp_path: Path, content: bytes) -> None:
    (tmp_path / f"forged{READY_SUFFIX}").write_bytes(content)
    assert WorkerSiblings(tmp_path, name="w").ready_workers() == 0


def test_what_is_not_a_marker_file_does_not_count_and_breaks_nothing(tmp_path: Path) -> None:
    (tmp_path / "a-directory.ready").mkdir()
    (tmp_path / "dangling.ready").symlink_to(tmp_path / "nowhere")
    (tmp_path / "unreadable.ready").write_text(str(os.getpid()))
    (tmp_path / "unreadable.ready").chmod(0)
    worker = WorkerSiblings(tmp_path, name="w")
    worker.mark_ready()
    expected = 1 if os.geteuid() != 0 else 2  # root reads a file of mode 0 all the same
    assert worker.ready_workers() == expected


def test_a_directory_gone_counts_no_worker(tmp_path: Path) -> None:
    worker = WorkerSiblings(tmp_path / "removed", name="w")
    assert worker.ready_workers() == 0
    with pytest.raises(OSError):
        worker.mark_ready()
