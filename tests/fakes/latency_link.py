"""LatencyLink: a TCP relay on loopback that holds every request's bytes for a fixed delay.

What a burst benchmark needs in front of the GCS emulator: every storage request takes L
longer, and the requests are counted. FaultyProxy does that as an HTTP proxy (aiohttp parses
each request, makes a new one upstream and copies the answer back): about 1 ms of CPU a
request, more than the emulator itself, on the rig's one core. Here the bytes a client sends
are passed on L after they arrived, in order, and answers come back untouched; the only
parsing is finding where each request ends, to count it (by Content-Length, as
google-cloud-storage sends every body).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Self
from urllib.parse import urlsplit

from tests.fakes._loop_thread import LoopThread
from tests.fakes._started import StartedInWith


class LatencyLink(StartedInWith):
    def __init__(self, upstream: str, delay: float) -> None:
        parts = urlsplit(upstream)
        self._upstream = (parts.hostname or "127.0.0.1", parts.port or 80)
        self.delay = delay
        self._loop_thread = LoopThread("LatencyLink")
        self._server: asyncio.Server | None = None
        self._lock = threading.Lock()
        self._arrivals: list[tuple[float, str]] = []

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("LatencyLink is not started")
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    @property
    def requests(self) -> list[tuple[float, str]]:
        """Each request so far: when it began to arrive (`time.monotonic()`), its request line."""
        with self._lock:
            return list(self._arrivals)

    def start(self) -> Self:
        self._loop_thread.start()
        self._server = self._loop_thread.run(self._serve())
        return self

    async def _serve(self) -> asyncio.Server:
        loop = asyncio.get_running_loop()
        return await loop.create_server(lambda: _Client(self), "127.0.0.1", 0)

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            self._loop_thread.stop()

    def _arrived(self, line: bytes) -> None:
        with self._lock:
            self._arrivals.append((time.monotonic(), line.decode("latin-1")))


class _Upstream(asyncio.Protocol):
    def __init__(self, client: asyncio.Transport) -> None:
        self._client = client

    def data_received(self, data: bytes) -> None:
        self._client.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._client.close()


class _Client(asyncio.Protocol):
    def __init__(self, link: LatencyLink) -> None:
        self._link = link
        self._held: deque[tuple[float, bytes]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._upstream: asyncio.Transport | None = None
        self._closing = False
        self._requests = _RequestCounter(link._arrived)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        asyncio.get_running_loop().create_task(self._connect())

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            upstream, _ = await loop.create_connection(
                lambda: _Upstream(self._transport), *self._link._upstream
            )
        except OSError:
            self._transport.close()
            return
        assert isinstance(upstream, asyncio.Transport)
        self._upstream = upstream
        self._pass_on()

    def data_received(self, data: bytes) -> None:
        self._requests.feed(data)
        loop = asyncio.get_running_loop()
        self._held.append((loop.time() + self._link.delay, data))
        if self._timer is None:
            self._timer = loop.call_at(self._held[0][0], self._pass_on)

    def _pass_on(self) -> None:
        """Send on what has been held long enough, in order; wait for the rest."""
        self._timer = None
        if self._upstream is None:
            return
        loop = asyncio.get_running_loop()
        while self._held and self._held[0][0] <= loop.time():
            self._upstream.write(self._held.popleft()[1])
        if self._held:
            self._timer = loop.call_at(self._held[0][0], self._pass_on)
        elif self._closing:
            self._upstream.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closing = True
        if self._upstream is not None and not self._held:
            self._upstream.close()


class _RequestCounter:
    """Finds where each HTTP/1.1 request in a client's byte stream ends."""

    def __init__(self, arrived: Callable[[bytes], None]) -> None:
        self._arrived = arrived
        self._buffer = b""
        self._body_left = 0  # bytes of the request's body still to come

    def feed(self, data: bytes) -> None:
        self._buffer += data
        while self._step():
            pass

    def _step(self) -> bool:
        if self._body_left:
            taken = min(self._body_left, len(self._buffer))
            self._body_left -= taken
            self._buffer = self._buffer[taken:]
            return bool(self._buffer) and not self._body_left
        head, found, rest = self._buffer.partition(b"\r\n\r\n")
        if not found:
            return False
        request_line, _, headers = head.partition(b"\r\n")
        self._arrived(request_line)
        self._buffer = rest
        for line in headers.lower().split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name == b"content-length":
                self._body_left = int(value)
            elif name == b"transfer-encoding":  # closes the connection: the client sees it fail
                raise NotImplementedError("LatencyLink counts Content-Length bodies only")
        return bool(self._buffer)
