"""A Stop that reaches another worker process than the one answering still stops the answer.

With `HTTP_WORKERS` above 1 the kernel hands agent_view's Stop to whichever worker accepts
it; the worker that finds no turn of that conversation asks its siblings over their Unix
sockets (app/runtime/worker_siblings.py). Here the workers are `WorkerSiblings` of one test
process, named "a", "b", "c", listening on real Unix sockets in one directory; the turns are
real asyncio tasks.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from app.runtime import worker_siblings
from app.runtime.worker_siblings import DIRECTORY_VARIABLE, WorkerSiblings
from app.slack.conversation.running_turns import RunningTurns, Stopped
from tests.answers_in_progress import Answer, settled
from tests.runtime.worker_processes import socket_of, workers

CHANNEL, OTHER_CHANNEL = "D0STOP", "D0ELSE"
THREAD, OTHER_THREAD = "1712345678.000100", "1712345678.000200"


async def test_a_stop_on_one_worker_cancels_the_answer_running_in_another(tmp_path: Path) -> None:
    async with workers(tmp_path, "a", "b") as (a, b):
        answer = Answer("Here is the plan for the migration...")
        same_channel = Answer("Answer in another thread of the DM.")
        other_channel = Answer("Answer in another person's DM, same thread ts.")
        async with settled(answer, same_channel, other_channel):
            with (
                b.running(CHANNEL, THREAD, answer.task),
                b.running(CHANNEL, OTHER_THREAD, same_channel.task),
                b.running(OTHER_CHANNEL, THREAD, other_channel.task),
            ):
                assert await a.stop(CHANNEL, THREAD) is Stopped.BY_A_SIBLING

                with pytest.raises(asyncio.CancelledError):
                    await answer.task
                assert b.was_stopped(answer.task), "worker b tells the Stop from a shutdown"
                assert await same_channel.finish() == "Answer in another thread of the DM."
                assert await other_channel.finish() == (
                    "Answer in another person's DM, same thread ts."
                )
                assert not b.was_stopped(same_channel.task)
                assert not b.was_stopped(other_channel.task)


async def test_a_stop_that_no_worker_is_answering_stops_nothing(tmp_path: Path) -> None:
    async with workers(tmp_path, "a", "b") as (a, b):
        other = Answer("Answer in another conversation.")
        async with settled(other):
            with b.running(OTHER_CHANNEL, OTHER_THREAD, other.task):
                assert await a.stop(CHANNEL, THREAD) is Stopped.NOTHING

                assert await other.finish() == "Answer in another conversation."


async def test_a_stop_after_the_answer_finished_in_another_worker_stops_nothing(
    tmp_path: Path,
) -> None:
    async with workers(tmp_path, "a", "b") as (a, b):
        answer = Answer("Done already.")
        async with settled(answer):
            with b.running(CHANNEL, THREAD, answer.task):
                assert await answer.finish() == "Done already."

                # Still inside the turn (finishing up), but the answer itself is complete.
                assert await a.stop(CHANNEL, THREAD) is Stopped.NOTHING
                assert not b.was_stopped(answer.task)

            assert await a.stop(CHANNEL, THREAD) is Stopped.NOTHING, "and once the turn ended"


async def test_of_three_workers_the_one_answering_stops_and_the_other_is_untouched(
    tmp_path: Path,
) -> None:
    async with workers(tmp_path, "a", "b", "c") as (a, b, c):
        answer = Answer("Answer being written by c.")
        elsewhere = Answer("b's answer in another conversation.")
        async with settled(answer, elsewhere):
            with (
                c.running(CHANNEL, THREAD, answer.task),
                b.running(CHANNEL, OTHER_THREAD, elsewhere.task),
            ):
                assert await a.stop(CHANNEL, THREAD) is Stopped.BY_A_SIBLING

                with pytest.raises(asyncio.CancelledError):
                    await answer.task
                assert c.was_stopped(answer.task)
                assert await elsewhere.finish() == "b's answer in another conversation."


def _socket_without_listener(path: Path) -> None:
    """What a worker killed with SIGKILL leaves: its socket file, bound, nobody listening."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as bound:
        bound.bind(str(path))


def _regular_file(path: Path) -> None:
    path.write_text("not a socket")


def _directory(path: Path) -> None:
    path.mkdir()


LEFT_BEHIND = {
    "socket_without_listener": _socket_without_listener,
    "regular_file": _regular_file,
    "directory": _directory,
}


@pytest.mark.parametrize("leave", LEFT_BEHIND.values(), ids=LEFT_BEHIND.keys())
async def test_what_a_dead_worker_left_behind_does_not_keep_the_stop_from_arriving(
    tmp_path: Path, leave: Callable[[Path], None]
) -> None:
    leave(socket_of(tmp_path, "dead"))
    async with workers(tmp_path, "a", "b") as (a, b):
        answer = Answer("Answer being written by b.")
        async with settled(answer):
            with b.running(CHANNEL, THREAD, answer.task):
                assert await a.stop(CHANNEL, THREAD) is Stopped.BY_A_SIBLING

                with pytest.raises(asyncio.CancelledError):
                    await answer.task

            assert await a.stop(CHANNEL, THREAD) is Stopped.NOTHING


@asynccontextmanager
async def mute_sibling(path: Path) -> AsyncIterator[None]:
    """A worker whose loop accepts the request, reads it, and never answers."""
    released = asyncio.Event()

    async def read_and_wait(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        await released.wait()
        writer.close()

    server = await asyncio.start_unix_server(read_and_wait, path=str(path))
    try:
        yield
    finally:
        released.set()
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize(
    ("running_in_b", "expected"),
    [(True, Stopped.BY_A_SIBLING), (False, Stopped.NOTHING)],
    ids=["b_answering", "nobody_answering"],
)
async def test_a_sibling_that_never_answers_does_not_change_the_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, running_in_b: bool, expected: Stopped
) -> None:
    monkeypatch.setattr(worker_siblings, "ASK_TIMEOUT_S", 0.2)
    async with mute_sibling(socket_of(tmp_path, "mute")), workers(tmp_path, "a", "b") as (a, b):
        answer = Answer("Answer being written by b.")
        async with settled(answer):
            if running_in_b:
                with b.running(CHANNEL, THREAD, answer.task):
                    assert await a.stop(CHANNEL, THREAD) is expected
            else:
                assert await a.stop(CHANNEL, THREAD) is expected
            assert answer.task.cancelled() is running_in_b


async def test_a_closed_worker_leaves_no_socket_and_is_no_longer_asked(tmp_path: Path) -> None:
    async with workers(tmp_path, "a") as (a,):
        b_siblings = WorkerSiblings(tmp_path, name="b")
        b = RunningTurns(b_siblings)
        await b_siblings.listen()
        assert socket_of(tmp_path, "b").is_socket()

        await b_siblings.close()

        assert not socket_of(tmp_path, "b").exists()
        answer = Answer("An answer b would have written.")
        async with settled(answer):
            with b.running(CHANNEL, THREAD, answer.task):
                assert await a.stop(CHANNEL, THREAD) is Stopped.NOTHING
                assert not answer.task.done()


@pytest.mark.parametrize(
    "leave", [_socket_without_listener, _regular_file], ids=["socket_without_listener", "file"]
)
async def test_a_worker_listens_again_where_a_crashed_one_left_its_socket(
    tmp_path: Path, leave: Callable[[Path], None]
) -> None:
    leave(socket_of(tmp_path, "b"))  # the worker of that pid crashed; its pid is reused

    async with workers(tmp_path, "a", "b") as (a, b):
        answer = Answer("Answer being written by the new b.")
        async with settled(answer):
            with b.running(CHANNEL, THREAD, answer.task):
                assert await a.stop(CHANNEL, THREAD) is Stopped.BY_A_SIBLING
                assert b.was_stopped(answer.task)


async def test_a_worker_of_a_parent_with_workers_listens_by_its_pid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DIRECTORY_VARIABLE, str(tmp_path))
    siblings = WorkerSiblings.from_environment()
    assert siblings is not None
    turns = RunningTurns(siblings)
    await siblings.listen()
    try:
        async with workers(tmp_path, "a") as (a,):
            answer = Answer("Answer being written by this process's worker.")
            async with settled(answer):
                with turns.running(CHANNEL, THREAD, answer.task):
                    assert await a.stop(CHANNEL, THREAD) is Stopped.BY_A_SIBLING
                    assert turns.was_stopped(answer.task)
    finally:
        await siblings.close()


async def test_a_process_serving_alone_has_no_siblings_to_ask(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(DIRECTORY_VARIABLE, raising=False)
    siblings = WorkerSiblings.from_environment()

    assert siblings is None
    assert await RunningTurns(siblings).stop(CHANNEL, THREAD) is Stopped.NOTHING
