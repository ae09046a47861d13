"""Blackhole: a loopback address where TCP connects hang, as they do towards a host whose
packets are dropped (a firewall, a route to nowhere).

A listening socket that never accepts, with its accept queue filled by a connection of
its own: the kernel then drops every further SYN, so a client's `connect()` neither
succeeds nor is refused; it waits for its own connect timeout. (A server that accepts
and never answers is a different trouble, a hung server: FaultyProxy's `delay` rules.)
"""

from __future__ import annotations

import socket
from typing import Self

from tests.fakes._started import StartedInWith


class Blackhole(StartedInWith):
    def __init__(self) -> None:
        self._listener: socket.socket | None = None
        self._filler: socket.socket | None = None
        self._port: int | None = None

    @property
    def address(self) -> str:
        """`host:port`, for settings that take an address rather than a URL."""
        if self._port is None:
            raise RuntimeError("Blackhole is not started")
        return f"127.0.0.1:{self._port}"

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    def start(self) -> Self:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)  # room for one connection not yet accepted: the filler's
        self._port = listener.getsockname()[1]
        filler = socket.create_connection(("127.0.0.1", self._port), timeout=5)
        self._listener, self._filler = listener, filler
        return self

    def stop(self) -> None:
        for sock in (self._filler, self._listener):
            if sock is not None:
                sock.close()
        self._listener = self._filler = None
