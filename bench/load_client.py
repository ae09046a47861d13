"""Post N signed events at once from a separate process; print each ack latency (JSON),
or with `"sent_at": true` in the spec also when each was sent (`time.monotonic()`, the
clock the fakes note their calls on), for a benchmark that times what follows the ack.

Kept out of the benchmark's own process, whose threads serve the fakes: timing the acks
there would also time the fakes' work. The client is deliberately thin — one keep-alive
connection per request (as Slack keeps its connections alive), requests serialised before
the clock starts, responses noticed as soon as they are parsed — so that the figure is
Orion's acknowledgement, not the client's own work. A full HTTP client (aiohttp) spent
about 0.25 ms of CPU per request, which with a hundred in flight added some 25 ms to
every figure.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from urllib.parse import urlsplit

import httptools
import uvloop


class _Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection that notes when each whole response arrived;
    responses are parsed by httptools (the parser uvicorn uses)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._response: asyncio.Future[float] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is not a subclass

    def send(self, request: bytes) -> asyncio.Future[float]:
        assert self.transport is not None
        self._response = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self._response

    def data_received(self, data: bytes) -> None:
        self._parser.feed_data(data)

    def on_message_complete(self) -> None:  # httptools callback: a whole response is in
        arrived = time.perf_counter()
        if self._response is None or self._response.done():
            return
        status = self._parser.get_status_code()
        if status == 200:
            self._response.set_result(arrived)
        else:
            self._response.set_exception(RuntimeError(f"HTTP {status}"))

    def connection_lost(self, exc: Exception | None) -> None:
        if self._response is not None and not self._response.done():
            self._response.set_exception(ConnectionError("connection closed"))


def _http_request(method: str, host: str, path: str, headers: dict, body: bytes) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _post_all(
    url: str, health_url: str, requests: list[dict]
) -> tuple[list[float], list[float]]:
    """When each request was sent (`time.monotonic()`) and its ack latency."""
    loop = asyncio.get_running_loop()
    target = urlsplit(url)
    host, port = target.hostname or "127.0.0.1", target.port or 80
    connections: list[_Connection] = []
    for _ in requests:
        _, connection = await loop.create_connection(_Connection, host, port)
        connections.append(connection)
    health = _http_request("GET", target.netloc, urlsplit(health_url).path, {}, b"")
    await asyncio.gather(*(c.send(health) for c in connections))  # connections warmed

    posts = [
        _http_request("POST", target.netloc, target.path, r["headers"], r["body"].encode())
        for r in requests
    ]
    sent: list[float] = []
    sent_at: list[float] = []
    responses = []
    for connection, post in zip(connections, posts, strict=True):
        sent_at.append(time.monotonic())
        sent.append(time.perf_counter())
        responses.append(connection.send(post))
    arrived = await asyncio.gather(*responses)
    for connection in connections:
        assert connection.transport is not None
        connection.transport.close()
    return sent_at, [done - start for start, done in zip(sent, arrived, strict=True)]


if __name__ == "__main__":
    spec = json.load(sys.stdin)
    sent_at, latencies = uvloop.run(_post_all(spec["url"], spec["health_url"], spec["requests"]))
    if spec.get("sent_at"):
        print(json.dumps({"sent_at": sent_at, "latencies": latencies}))
    else:
        print(json.dumps(latencies))
