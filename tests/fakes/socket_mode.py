"""FakeSocketModeServer: Slack's Socket Mode WebSocket endpoint on loopback.

FakeSlack's `apps.connections.open` hands out `ws://127.0.0.1:P/link/?ticket=...` URLs from
this server. A client that connects gets Slack's `hello`; tests then push envelopes
(`send_events_api`, `send_interactive`) and wait for the client's ack (`wait_ack`).
WebSocket pings in both directions are answered by the `websockets` library itself.
"""

from __future__ import annotations

import json
import threading
import uuid
from http import HTTPStatus
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from tests.fakes._loop_thread import LoopThread
from tests.fakes._started import StartedInWith
from tests.fakes._waiting import PATIENCE_S, wait_until, wait_until_async


class FakeSocketModeServer(StartedInWith):
    def __init__(self, app_id: str = "A1") -> None:
        self.app_id = app_id
        self._loop_thread = LoopThread("FakeSocketModeServer")
        self._server: Server | None = None
        self._port: int | None = None
        self._lock = threading.Lock()
        self._tickets: set[str] = set()
        self._connections: list[ServerConnection] = []
        self._acks: dict[str, dict[str, Any]] = {}
        self._received: list[dict[str, Any]] = []
        self._sent: list[dict[str, Any]] = []
        self.connections_opened = 0

    # --- lifecycle ---

    @property
    def url(self) -> str:
        if self._port is None:
            raise RuntimeError("FakeSocketModeServer is not started")
        return f"ws://127.0.0.1:{self._port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> Self:
        if self._server is None:
            self._loop_thread.start()
            self._loop_thread.run(self._serve())
        return self

    async def _serve(self) -> None:
        self._server = await serve(self._handle, "127.0.0.1", 0, process_request=self._check_ticket)
        self._port = self._server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        server = self._server
        if server is None:
            return
        self._server = None

        async def close() -> None:
            server.close()
            await server.wait_closed()

        try:
            self._loop_thread.run(close())
        finally:
            self._loop_thread.stop()

    # --- connection URLs (called by FakeSlack's apps.connections.open) ---

    def issue_url(self) -> str:
        ticket = uuid.uuid4().hex
        with self._lock:
            self._tickets.add(ticket)
        return f"{self.url}/link/?ticket={ticket}&app_id={self.app_id}"

    def _check_ticket(self, connection: ServerConnection, request: Request) -> Response | None:
        # Slack only accepts URLs it issued; a client that skips apps.connections.open is a bug.
        ticket = parse_qs(urlsplit(request.path).query).get("ticket", [""])[0]
        with self._lock:
            known = ticket in self._tickets
        if known:
            return None
        return connection.respond(HTTPStatus.UNAUTHORIZED, "unknown ticket\n")

    # --- the WebSocket session ---

    async def _handle(self, connection: ServerConnection) -> None:
        with self._lock:
            self._connections.append(connection)
            self.connections_opened += 1
            count = len(self._connections)
        hello = {
            "type": "hello",
            "num_connections": count,
            "debug_info": {
                "host": "applink-fake",
                "build_number": 1,
                "approximate_connection_time": 18060,
            },
            "connection_info": {"app_id": self.app_id},
        }
        try:
            await connection.send(json.dumps(hello))
            async for raw in connection:
                message = json.loads(raw)
                with self._lock:
                    self._received.append(message)
                    envelope_id = message.get("envelope_id")
                    if envelope_id is not None:
                        self._acks[envelope_id] = message
        except ConnectionClosed:
            pass
        finally:
            with self._lock:
                self._connections.remove(connection)

    # --- what tests do ---

    @property
    def connected(self) -> int:
        """Number of currently open client connections."""
        with self._lock:
            return len(self._connections)

    def wait_connected(self, timeout: float = PATIENCE_S) -> None:
        wait_until(lambda: self.connected > 0, timeout, "a socket mode client to connect")

    async def wait_connected_async(
        self,
        timeout: float = PATIENCE_S,  # noqa: ASYNC109 - same signature as wait_connected
    ) -> None:
        await wait_until_async(lambda: self.connected > 0, timeout, "a socket mode client")

    def send_envelope(
        self,
        type: str,
        payload: dict[str, Any],
        *,
        accepts_response_payload: bool = False,
        **extra: Any,
    ) -> str:
        """Send `{"envelope_id", "type", "accepts_response_payload", "payload", **extra}`."""
        envelope_id = str(uuid.uuid4())
        envelope = {
            "envelope_id": envelope_id,
            "type": type,
            "accepts_response_payload": accepts_response_payload,
            **extra,
            "payload": payload,
        }
        self._send(envelope)
        return envelope_id

    def send_events_api(
        self, payload: dict[str, Any], *, retry_attempt: int = 0, retry_reason: str = ""
    ) -> str:
        """Deliver an `event_callback` payload (see slack_events.py); returns the envelope id."""
        return self.send_envelope(
            "events_api", payload, retry_attempt=retry_attempt, retry_reason=retry_reason
        )

    def send_interactive(self, payload: dict[str, Any]) -> str:
        """Deliver an interactivity payload such as `block_actions`."""
        return self.send_envelope("interactive", payload, accepts_response_payload=True)

    def send_disconnect(self, reason: str = "refresh_requested") -> None:
        """Ask the client to reconnect, as Slack does before recycling a connection."""
        self._send({"type": "disconnect", "reason": reason, "debug_info": {"host": "fake"}})

    def _send(self, message: dict[str, Any]) -> None:
        with self._lock:
            if not self._connections:
                raise RuntimeError("no socket mode client is connected")
            # Slack delivers each envelope to one of the app's connections: use the newest.
            connection = self._connections[-1]
            self._sent.append(message)
        self._loop_thread.run(connection.send(json.dumps(message)))

    def ack(self, envelope_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._acks.get(envelope_id)

    def wait_ack(self, envelope_id: str, timeout: float = PATIENCE_S) -> dict[str, Any]:
        """The client's ack (`{"envelope_id": ..., "payload"?: ...}`); TimeoutError if none."""
        return wait_until(lambda: self.ack(envelope_id), timeout, f"ack of {envelope_id}")

    async def wait_ack_async(
        self,
        envelope_id: str,
        timeout: float = PATIENCE_S,  # noqa: ASYNC109 - same signature as wait_ack
    ) -> dict[str, Any]:
        return await wait_until_async(
            lambda: self.ack(envelope_id), timeout, f"ack of {envelope_id}"
        )

    @property
    def received(self) -> list[dict[str, Any]]:
        """Every JSON message clients sent, in order."""
        with self._lock:
            return list(self._received)

    @property
    def sent(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._sent)
