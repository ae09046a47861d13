"""Base for the HTTP fakes: an aiohttp.web application served on loopback from a LoopThread."""

from __future__ import annotations

import logging
from typing import Self

from aiohttp import web

from tests.fakes._loop_thread import LoopThread
from tests.fakes._started import StartedInWith

# Deliberately dropped connections and cancelled slow handlers make aiohttp log noise that
# says nothing about the code under test.
logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)


class HttpFake(StartedInWith):
    """Subclasses implement `_routes()`; `.url` is `http://127.0.0.1:<port>` plus `_url_suffix`."""

    _url_suffix = ""

    def __init__(self, port: int = 0) -> None:
        """`port` 0: a free one, chosen at start (what tests use)."""
        self._loop_thread = LoopThread(type(self).__name__)
        self._runner: web.AppRunner | None = None
        self._port: int | None = None
        self._requested_port = port

    def _routes(self) -> list[web.RouteDef]:
        raise NotImplementedError

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return self._port

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return self.root_url + self._url_suffix

    def start(self) -> Self:
        if self._runner is not None:
            return self
        self._loop_thread.start()
        self._loop_thread.run(self._serve())
        return self

    async def _serve(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.add_routes(self._routes())
        # A short shutdown timeout: a test may stop the fake while a delayed response is pending.
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", self._requested_port)
        await site.start()
        self._runner = runner
        self._port = runner.addresses[0][1]

    def stop(self) -> None:
        runner = self._runner
        if runner is not None:
            self._runner = None
            try:
                self._loop_thread.run(runner.cleanup(), timeout=10)
            finally:
                self._loop_thread.stop()
