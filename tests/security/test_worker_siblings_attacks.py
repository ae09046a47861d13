"""Someone holding a connection to a worker's sibling socket cannot stop anyone's answer,
nor silence the listener that real Stops from the other workers go through.

The socket lives in a directory only the instance's user can enter
(app/runtime/worker_siblings.py), so this is what a confused or compromised process of that
user could send. Whatever it sends, the worker answering the conversation ("b") keeps
writing, answers `{"stopped": false}` or closes, logs a refusal, and afterwards a genuine
Stop passed on by its sibling ("a") still stops the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.observability.logging import configure_logging
from app.runtime import worker_siblings
from app.slack.conversation.running_turns import RunningTurns, Stopped
from tests import log_events
from tests.answers_in_progress import Answer
from tests.runtime.worker_processes import socket_of, workers

CHANNEL, THREAD = "D0STOP", "1712345678.000100"
# Only so that a listener which neither answers nor closes fails the test instead of
# hanging it; it answers or closes within its ASK_TIMEOUT_S (made 0.2 s here).
HANG_GUARD_S = 10.0
ANSWERED_OR_CLOSED = (b"", b'{"stopped": false}\n')


@pytest.fixture(autouse=True)
def short_ask_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_siblings, "ASK_TIMEOUT_S", 0.2)


@pytest.fixture
def log_stream() -> io.StringIO:
    stream = io.StringIO()
    configure_logging(level="INFO", fmt="json", stream=stream)
    return stream


def logged(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


@dataclass
class Target:
    """Worker b, answering the conversation; worker a, its sibling, to pass a real Stop on."""

    a: RunningTurns
    b: RunningTurns
    answer: Answer
    socket: Path

    def assert_still_writing(self) -> None:
        assert not self.answer.task.done(), "the attacker stopped the answer"
        assert not self.b.was_stopped(self.answer.task)

    async def assert_a_genuine_stop_still_arrives(self) -> None:
        assert await self.a.stop(CHANNEL, THREAD) is Stopped.BY_A_SIBLING
        with pytest.raises(asyncio.CancelledError):
            await self.answer.task
        assert self.b.was_stopped(self.answer.task)


@asynccontextmanager
async def a_turn_under_attack(directory: Path) -> AsyncIterator[Target]:
    async with workers(directory, "a", "b") as (a, b):
        answer = Answer("Answer being written by b.")
        try:
            with b.running(CHANNEL, THREAD, answer.task):
                yield Target(a, b, answer, socket_of(directory, "b"))
        finally:
            answer.task.cancel()
            await asyncio.gather(answer.task, return_exceptions=True)


async def attack(path: Path, payload: bytes) -> bytes:
    """Send `payload` on a connection of its own; what the listener answered before closing."""
    return await send(*await asyncio.open_unix_connection(str(path)), payload)


async def send(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, payload: bytes) -> bytes:
    try:
        # The listener may close while a long payload is still being sent.
        with contextlib.suppress(ConnectionError):
            writer.write(payload)
            await writer.drain()
        try:
            return await asyncio.wait_for(reader.read(), HANG_GUARD_S)
        except ConnectionResetError:  # closed with the payload unread
            return b""
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


def assert_refused(lines: list[dict[str, Any]], *, with_traceback: bool = False) -> None:
    refusals = [
        line for line in lines if line["message"] == log_events.ORION_WORKER_SIBLING_REQUEST_REFUSED
    ]
    assert refusals, "no refusal logged"
    if with_traceback:  # what the exception that refused it was, and where
        assert all("Traceback" in line.get("exception", "") for line in refusals), refusals
    assert_nothing_swallowed(lines)


def assert_nothing_swallowed(lines: list[dict[str, Any]]) -> None:
    # An exception escaping the listener's handler reaches asyncio's own logger.
    escaped = [line for line in lines if line.get("logger") == "asyncio"]
    assert not escaped, escaped


def line(request: Any) -> bytes:
    return json.dumps(request).encode() + b"\n"


# Lines that are not JSON: refused, the parser's exception logged with its traceback.
NOT_JSON = {
    "a_mebibyte_without_newline": b"x" * (1 << 20),
    "a_long_line": line({"stop": [CHANNEL, THREAD], "padding": "x" * 4096}),
    "not_json": b"stop D0STOP 1712345678.000100\n",
    "a_stop_then_more": line({"stop": [CHANNEL, THREAD]})[:-1] + b" and more\n",
    "not_utf8": b'{"stop": ["\xff\xfe", "\xc0\xaf"]}\n',
    "empty_line": b"\n",
    # Short enough to be read, nested deeper than the JSON parser recurses.
    "nested_past_the_parser": b"[" * 1000 + b"\n",
    "a_stop_nested_past_the_parser": b'{"stop": ' + b"[" * 1000 + b"\n",
}
# JSON, but not a Stop.
WRONG_SHAPES = {
    "stop_a_string": line({"stop": "x"}),
    "stop_a_conversation_as_one_string": line({"stop": f"{CHANNEL} {THREAD}"}),
    "three_ids": line({"stop": [CHANNEL, THREAD, THREAD]}),
    "one_id": line({"stop": [CHANNEL]}),
    "ids_of_65_characters": line({"stop": [CHANNEL + "X" * 59, THREAD]}),
    "numbers": line({"stop": [1, 1712345678.0001]}),
    "nested_lists": line({"stop": [[CHANNEL], [THREAD]]}),
    "an_object": line({"stop": {"channel": CHANNEL, "thread_ts": THREAD}}),
    "null": line(None),
    "null_ids": line({"stop": [None, None]}),
    "empty_strings": line({"stop": ["", ""]}),
    "a_list_not_an_object": line([CHANNEL, THREAD]),
    "a_number": b"1e999999\n",
    "another_key": line({"Stop": [CHANNEL, THREAD]}),
}


@pytest.mark.parametrize("payload", NOT_JSON.values(), ids=NOT_JSON.keys())
async def test_a_request_that_is_not_json_stops_nothing(
    tmp_path: Path, log_stream: io.StringIO, payload: bytes
) -> None:
    async with a_turn_under_attack(tmp_path) as target:
        assert await attack(target.socket, payload) in ANSWERED_OR_CLOSED

        target.assert_still_writing()
        assert_refused(logged(log_stream), with_traceback=True)
        await target.assert_a_genuine_stop_still_arrives()


@pytest.mark.parametrize("payload", WRONG_SHAPES.values(), ids=WRONG_SHAPES.keys())
async def test_a_request_not_shaped_as_a_stop_stops_nothing(
    tmp_path: Path, log_stream: io.StringIO, payload: bytes
) -> None:
    async with a_turn_under_attack(tmp_path) as target:
        assert await attack(target.socket, payload) in ANSWERED_OR_CLOSED

        target.assert_still_writing()
        assert_refused(logged(log_stream))
        await target.assert_a_genuine_stop_still_arrives()


# Well-formed Stops for conversations that look like the one running, and are not it.
LOOKALIKE_IDS = {
    "lowercase": ["d0stop", THREAD],
    "fullwidth_letters": ["Ｄ0ＳＴＯＰ", THREAD],
    "fullwidth_digits": [CHANNEL, "１７１２３４５６７８.０００１００"],
    "zero_width_space": [CHANNEL + "\u200b", THREAD],
    "nul": [CHANNEL, THREAD + "\x00"],
    "right_to_left_override": ["\u202e" + CHANNEL, THREAD],
    "combining_accent": [CHANNEL + "\u0301", THREAD],
    "one_dot_leader": [CHANNEL, THREAD.replace(".", "\u2024")],
    "lone_surrogate": ["\ud800", THREAD],
    "astral": ["\U0001f6d1" * 16, THREAD],
}


@pytest.mark.parametrize("ensure_ascii", [True, False], ids=["escaped", "raw_utf8"])
@pytest.mark.parametrize("ids", LOOKALIKE_IDS.values(), ids=LOOKALIKE_IDS.keys())
async def test_ids_that_only_look_like_the_conversation_stop_nothing(
    tmp_path: Path, log_stream: io.StringIO, ids: list[str], ensure_ascii: bool
) -> None:
    payload = json.dumps({"stop": ids}, ensure_ascii=ensure_ascii)
    async with a_turn_under_attack(tmp_path) as target:
        reply = await attack(target.socket, payload.encode("utf-8", "surrogatepass") + b"\n")

        assert reply in ANSWERED_OR_CLOSED
        target.assert_still_writing()
        assert_nothing_swallowed(logged(log_stream))
        await target.assert_a_genuine_stop_still_arrives()


async def test_a_connection_that_sends_nothing_is_closed(
    tmp_path: Path, log_stream: io.StringIO
) -> None:
    async with a_turn_under_attack(tmp_path) as target:
        assert await attack(target.socket, b"") == b""

        target.assert_still_writing()
        assert_refused(logged(log_stream), with_traceback=True)
        await target.assert_a_genuine_stop_still_arrives()


async def test_two_hundred_hostile_connections_at_once_leave_the_listener_answering(
    tmp_path: Path, log_stream: io.StringIO
) -> None:
    payloads = [b"", *NOT_JSON.values(), *WRONG_SHAPES.values()]
    async with a_turn_under_attack(tmp_path) as target:
        # Opened one after the other, so each is accepted (an attacker who fills the listen
        # backlog instead only keeps its own connections from being made), then all at work
        # at once.
        connections = [await asyncio.open_unix_connection(str(target.socket)) for _ in range(200)]
        replies = await asyncio.gather(
            *(
                send(reader, writer, payloads[i % len(payloads)])
                for i, (reader, writer) in enumerate(connections)
            )
        )

        assert set(replies) <= set(ANSWERED_OR_CLOSED)
        target.assert_still_writing()
        assert_refused(logged(log_stream))
        await target.assert_a_genuine_stop_still_arrives()


@asynccontextmanager
async def a_sibling_answering(path: Path, answer: bytes) -> AsyncIterator[None]:
    """Something listening in the siblings' directory that answers every Stop with `answer`."""

    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readline()
        with contextlib.suppress(ConnectionError):
            writer.write(answer)
            await writer.drain()
        writer.close()

    server = await asyncio.start_unix_server(reply, path=str(path))
    try:
        yield
    finally:
        server.close()
        await server.wait_closed()


HOSTILE_ANSWERS = {
    "nested_past_the_parser": b"[" * 1000 + b"\n",
    "a_long_line": line({"stopped": True, "padding": "x" * 4096}),
    "not_json": b"yes\n",
    "stopped_as_a_string": line({"stopped": "true"}),
    "stopped_as_a_number": line({"stopped": 1}),
    "a_list": line([True]),
    "nothing": b"",
}


@pytest.mark.parametrize("answer", HOSTILE_ANSWERS.values(), ids=HOSTILE_ANSWERS.keys())
async def test_a_hostile_answer_from_the_directory_is_not_taken_for_a_stop(
    tmp_path: Path, log_stream: io.StringIO, answer: bytes
) -> None:
    async with (
        a_sibling_answering(socket_of(tmp_path, "hostile"), answer),
        a_turn_under_attack(tmp_path) as target,
    ):
        assert await target.a.stop(CHANNEL, "1712345678.999999") is Stopped.NOTHING

        lines = logged(log_stream)
        assert_nothing_swallowed(lines)
        unanswered = [
            line for line in lines if line["message"] == log_events.ORION_WORKER_SIBLING_UNANSWERED
        ]
        assert all("Traceback" in line.get("exception", "") for line in unanswered), unanswered
        await target.assert_a_genuine_stop_still_arrives()
