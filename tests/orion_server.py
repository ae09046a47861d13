"""Run the real Orion HTTP app (Starlette + Bolt + uvicorn) on loopback for a test.

The server runs in its own thread and event loop, exactly as in production, so Bolt acks
each event over HTTP and runs the listener afterwards; tests post signed requests with a
real HTTP client and then look at what the fakes saw.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import httpx
import uvicorn

from app.config import RunMode, Settings
from app.http_server import HttpServer, prepare_http
from app.observability.setup import configure_observability
from app.runtime.in_flight import in_flight
from app.services import ServiceProvider, build_services, build_storage
from app.slack.app import build_bolt_app
from app.slack.conversation.running_turns import RunningTurns
from app.storage.store import StoreUnreachable
from tests import log_events
from tests.fakes._waiting import PATIENCE_S, wait_until, wait_until_async
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_events import sign

SIGNING_SECRET = "test-signing-secret-0123456789abcdef"
BOT_TOKEN = "xoxb-test-bot-token-0000"
ANTHROPIC_KEY = "sk-ant-test-key-0000"


def loopback_client(**options: Any) -> httpx.Client:
    """An HTTP client for Orion on loopback (plain HTTP). It loads no CA certificates: that
    cost 35-70 ms of CPU per client, paid by every end-to-end test and every poll of a
    starting process."""
    return httpx.Client(verify=False, **options)


def make_settings(slack: FakeSlack, claude: FakeClaude, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "slack_bot_token": BOT_TOKEN,
        "slack_signing_secret": SIGNING_SECRET,
        "slack_api_url": slack.url,
        "anthropic_api_key": ANTHROPIC_KEY,
        "anthropic_base_url": claude.url,
        "anthropic_max_retries": 0,
        "log_format": "json",
    }
    values.update(overrides)
    # _env_file=None: a developer's own .env must not leak into the tests.
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@contextmanager
def orion_servers(
    slack: FakeSlack, claude: FakeClaude, **defaults: Any
) -> Iterator[Callable[..., OrionServer]]:
    """Yields `start(**overrides)`, which starts Orion with `defaults` plus `overrides`;
    every server it started is stopped on exit."""
    with ExitStack() as stack:

        def start(**overrides: Any) -> OrionServer:
            settings = make_settings(slack, claude, **defaults, **overrides)
            return stack.enter_context(OrionServer(settings))

        yield start


def _stops_when_asked(server: HttpServer, asked: asyncio.Event) -> None:
    """Let `server` stop as soon as the test asks (`asked`), not up to 0.2 s later.

    uvicorn looks at `should_exit` every 0.1 s, and its shutdown sleeps 0.1 s after asking
    the open connections to close, whether any are open or not. The suite starts some 450
    servers: those waits were 0.15-0.2 s each, over a minute of its workers' time. Here the
    main loop also wakes when `asked` is set; the shutdown closes the listener and waits (no
    longer than uvicorn's 0.1 s) for the connections to close, which the test's client does
    first, then runs the lifespan's end (Orion's drain) at once. A connection still open,
    or a request still running, after that: uvicorn's own shutdown, unchanged. Every other
    step is uvicorn's and Orion's own."""
    state = server.server_state

    async def main_loop() -> None:
        counter = 0
        while not await server.on_tick(counter):  # uvicorn's tick: headers, should_exit
            counter = (counter + 1) % 864000
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asked.wait(), 0.1)

    async def shutdown(sockets: list[socket.socket] | None = None) -> None:
        for listening in server.servers:
            listening.close()
        for sock in sockets or []:
            sock.close()
        with contextlib.suppress(TimeoutError):  # uvicorn's 0.1 s, ended by their close
            await wait_until_async(lambda: not state.connections, 0.1, "connections to close")
        if state.connections or state.tasks:
            await uvicorn.Server.shutdown(server, sockets)
            return
        for listening in server.servers:
            await listening.wait_closed()
        if not server.force_exit:
            await server.lifespan.shutdown()

    server.main_loop = main_loop  # type: ignore[method-assign]
    server.shutdown = shutdown  # type: ignore[method-assign]


class OrionServer:
    def __init__(self, settings: Settings, *, started_as_deployed: bool = False) -> None:
        """Orion's HTTP app on its own thread and loop. By default over services built up
        front and a store connected before it listens, as `orion serve` connects it
        (tests measure behaviour, not how long the stack takes to import on a busy
        machine: a first event that had to wait for the storage client would spend its
        budgets on that); `started_as_deployed`: started as `orion serve` starts, on that
        loop — the store connected and asked, the bot token checked — before it listens."""
        self.settings = settings
        # As `orion` does at start-up; JSON lines are kept so tests can read every log line.
        self.log_stream = io.StringIO()
        configure_observability(settings, stream=self.log_stream)
        self._server: HttpServer | None = None
        if not started_as_deployed:
            if settings.gcs_memories_bucket:
                # Imported up front, as `orion serve` does before it listens: else the
                # first event would import it (seconds on a busy machine) within its budget.
                import google.cloud.storage  # noqa: F401
            provider = ServiceProvider(build_services(settings, build_storage(settings)))
            turns = RunningTurns()
            bolt_app = build_bolt_app(settings, provider, mode=RunMode.HTTP, turns=turns)
            self._server = HttpServer(settings, provider, bolt_app, turns)
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self._failed: BaseException | None = None
        self._stop_asked: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.http = loopback_client(base_url=self.url, timeout=PATIENCE_S)

    def _run(self) -> None:
        async def serve() -> None:
            if self._server is None:
                self._server = await prepare_http(self.settings)
            else:
                with contextlib.suppress(StoreUnreachable):  # then its breaker is open
                    await self._server.provider.storage.store.connect()
            asked = asyncio.Event()
            _stops_when_asked(self._server, asked)
            self._stop_asked = (asyncio.get_running_loop(), asked)
            # uvicorn installs no signal handlers off the main thread: the test stops it.
            await self._server.serve(sockets=[self._socket])

        try:
            asyncio.run(serve())
        except BaseException as exc:  # the test that waits for the start reports it
            self._failed = exc

    @property
    def server(self) -> HttpServer:
        assert self._server is not None, "Orion has not been built yet"
        return self._server

    @property
    def provider(self) -> ServiceProvider:
        return self.server.provider

    @property
    def turns(self) -> RunningTurns:
        return self.server.turns

    def __enter__(self) -> OrionServer:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not (self._server is not None and self._server.started):
            if self._failed is not None:
                raise RuntimeError("Orion did not start") from self._failed
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("Orion did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *_: object) -> None:
        self.http.close()
        if self._server is not None:
            self._server.should_exit = True
        if self._stop_asked is not None:
            loop, asked = self._stop_asked
            with contextlib.suppress(RuntimeError):  # its loop is already closed
                loop.call_soon_threadsafe(asked.set)
        self._thread.join(timeout=15)
        self._socket.close()

    def log_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log_stream.getvalue().splitlines() if line]

    def logged(self, message: str) -> list[dict[str, Any]]:
        """The log lines with this message (event name), in order."""
        return [line for line in self.log_lines() if line["message"] == message]

    def wait_logged(self, message: str, timeout: float = PATIENCE_S) -> list[dict[str, Any]]:
        """The log lines with this message, once there is at least one."""
        return wait_until(lambda: self.logged(message), timeout, f"the log line {message}")

    def handled(self, event_id: str) -> list[dict[str, Any]]:
        """The end lines of the deliveries of this event that Orion has finished handling.

        Every delivery Bolt hands to a listener ends in exactly one INFO line,
        `<listener>.done`, logged as the listener returns (a delivery dropped as a duplicate
        included): once it is there, that delivery has done everything it was going to do,
        except the background work it started (see `wait_idle`).
        """
        return [
            line
            for line in self.log_lines()
            if line.get("event_id") == event_id
            and line["message"].endswith(log_events.DONE)
            and line["severity"] == "INFO"
        ]

    def wait_handled(
        self, event_id: str, deliveries: int = 1, timeout: float = PATIENCE_S
    ) -> list[dict[str, Any]]:
        """The end lines of this event, once `deliveries` deliveries of it have ended."""

        def enough() -> list[dict[str, Any]] | None:
            lines = self.handled(event_id)
            return lines if len(lines) >= deliveries else None

        return wait_until(
            enough,
            timeout,
            lambda: f"{deliveries} handled deliveries of {event_id}, not {self.handled(event_id)}",
        )

    def wait_idle(self, timeout: float = PATIENCE_S) -> None:
        """Wait until nothing Orion was given is still running: no listener, no background
        work (memory hooks).

        This is the count graceful shutdown drains (`app.runtime.in_flight.in_flight`). An
        event is counted from the moment it is acknowledged (before its HTTP response is
        sent) and the work a listener starts in the background is counted before the
        listener ends; so once a response has come back, or an event's end line has been
        logged, a count of zero means that work, and everything it started, is over. The
        count is per process: with two servers running, this waits for both.
        """
        wait_until(lambda: in_flight.count == 0, timeout, lambda: f"{in_flight.count} in flight")

    def post_event(
        self,
        payload: dict[str, Any],
        *,
        timestamp: int | None = None,
        secret: str = SIGNING_SECRET,
        retry_num: int | None = None,
    ) -> httpx.Response:
        """POST a signed Events API request, as Slack does (`retry_num`: as Slack redelivers
        an event that was not acknowledged in time)."""
        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json", **sign(body, secret, timestamp)}
        if retry_num is not None:
            headers |= {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
        return self.http.post("/slack/events", content=body, headers=headers)

    def post_form(self, body: bytes, *, secret: str = SIGNING_SECRET) -> httpx.Response:
        """POST a signed interactivity request (form-encoded `payload=`)."""
        headers = {"Content-Type": "application/x-www-form-urlencoded", **sign(body, secret)}
        return self.http.post("/slack/events", content=body, headers=headers)
