"""POST a body the server may refuse before it has all been sent, and see the refusal.

An ordinary HTTP client sends the whole body before it reads the answer: against a server
that refuses a 30 MiB body after its headers, it blocks on a full socket and then fails
with a reset, never showing the answer. This one writes the body piece by piece while
listening, and stops writing as soon as the status line arrives: what a client on the
internet, or Slack, would see. Shared by tests/security and bench/intake.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

# A refusal comes within a second; this only keeps a broken server from hanging a run.
ANSWER_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Answer:
    status: int
    seconds: float  # from the request's first byte to the status line
    body_bytes_sent: int


async def post_until_answered(
    url: str,
    headers: Mapping[str, str],
    chunks: Iterable[bytes],
    *,
    chunked: bool,
) -> Answer:
    """POST `chunks` as the body (`chunked`: with Transfer-Encoding: chunked, else the
    caller's headers carry Content-Length), stopping once the server answers."""
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        head = [f"POST {parts.path} HTTP/1.1", f"Host: {parts.netloc}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        if chunked:
            head.append("Transfer-Encoding: chunked")
        started = time.monotonic()
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        status_line = asyncio.create_task(reader.readline())
        sent = await _send_until(writer, chunks, status_line, chunked=chunked)
        async with asyncio.timeout(ANSWER_TIMEOUT_S):
            line = await status_line
        seconds = time.monotonic() - started
        if not line:
            raise ConnectionError("the server closed the connection without an answer")
        return Answer(status=int(line.split()[1]), seconds=seconds, body_bytes_sent=sent)
    finally:
        writer.close()
        # The server may have closed first: its answer is what counts.
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def _send_until(
    writer: asyncio.StreamWriter,
    chunks: Iterable[bytes],
    answered: asyncio.Task[bytes],
    *,
    chunked: bool,
) -> int:
    """Write the body until it is all sent or the server has answered; returns the body
    bytes written."""
    sent = 0
    try:
        for chunk in chunks:
            if answered.done():
                return sent
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
            drained = asyncio.ensure_future(writer.drain())
            await asyncio.wait({drained, answered}, return_when=asyncio.FIRST_COMPLETED)
            if not drained.done():
                drained.cancel()
                return sent
            drained.result()
            sent += len(chunk)
        if chunked and not answered.done():
            writer.write(b"0\r\n\r\n")
            await writer.drain()
    except ConnectionError:
        pass  # the server stopped reading and closed: its answer may still be there
    return sent
