"""Socket Mode (local development): the Bolt app over Slack's WebSocket, connected once all is built
(docs/operations.md); Orion asks for the URL itself, as the SDK retries a refused token forever."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import aiohttp
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from app.config import RunMode, Settings
from app.observability.logging import get_logger
from app.runtime.heap import tune_collector_for_serving
from app.runtime.stop_signals import StopSignals
from app.services import start_services
from app.shutdown import Stopping
from app.slack.app import build_bolt_app, share_token_check
from app.slack.conversation.running_turns import RunningTurns
from app.slack.web_client import (
    SlackUnreachable,
    check_bot_token,
    close_connection_pool,
    share_connection_pool,
)

log = get_logger(__name__)

T = TypeVar("T")

# apps.connections.open answers that say nothing about the token: worth another try.
# (The client's retry handlers already wait out `ratelimited` as Slack asks.)
_TRANSIENT_ERRORS = {
    *("ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout"),
}
_FIRST_RETRY_S = 1.0
_MAX_RETRY_S = 30.0


class AppTokenRefused(Exception):
    """Slack refused SLACK_APP_TOKEN (Slack's error code in `error`); retrying cannot help."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


async def serve_socket_mode(settings: Settings, *, stop: asyncio.Event | None = None) -> None:
    """Build, connect and serve until `stop` is set (or SIGINT/SIGTERM), then drain. Raises,
    before serving, `AppTokenRefused` or what `check_bot_token` raises."""
    assert settings.slack_app_token is not None  # load_settings requires it in Socket Mode
    app_token = settings.slack_app_token.get_secret_value()
    stop = stop or asyncio.Event()
    stopping = Stopping()

    def stop_gracefully() -> None:
        stopping.begin()
        stop.set()

    StopSignals(stop_gracefully).install(asyncio.get_running_loop())
    provider = await start_services(settings)
    await provider.start()
    turns = RunningTurns()
    bolt_app = build_bolt_app(settings, provider, mode=RunMode.SOCKET, turns=turns)
    await share_connection_pool(bolt_app.client)
    handler = AsyncSocketModeHandler(bolt_app, app_token)
    tune_collector_for_serving()
    try:
        got_url, url = await _unless_stopped(stop, _connect(bolt_app, app_token))
        if got_url:
            # The handler's client connects to this URL rather than asking for another.
            handler.client.wss_uri = url
            connected, _ = await _unless_stopped(stop, handler.connect_async())
            if connected:
                log.info("orion.socket_mode.connected")
                await stop.wait()
    finally:
        await handler.disconnect_async()  # no new event from here on
        await stopping.drain(provider, turns)
        await handler.close_async()
        await close_connection_pool(bolt_app.client)


async def _connect(app: AsyncApp, app_token: str) -> str:
    """A WebSocket URL for the app token (Slack answers by then), and the bot token checked."""
    log.info("orion.socket_mode.connecting")
    url = await _connection_url(app.client, app_token)
    share_token_check(app, await check_bot_token(app.client))
    return url


async def _connection_url(client: AsyncWebClient, app_token: str) -> str:
    """A WebSocket URL from `apps.connections.open`, asked again with back-off on a passing
    error; `AppTokenRefused`, or `SlackUnreachable` after the client's own retries."""
    delay = _FIRST_RETRY_S
    while True:
        try:
            response = await client.apps_connections_open(app_token=app_token)
            return str(response["url"])
        except SlackApiError as exc:
            if exc.response.status_code != 200:
                raise SlackUnreachable(f"HTTP {exc.response.status_code}") from exc
            error = str(exc.response.get("error"))
            if error not in _TRANSIENT_ERRORS:
                raise AppTokenRefused(error) from None
            log.warning("orion.socket_mode.url_failed", error=error, retry_in_s=delay, exc_info=exc)
        except (SlackClientError, aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise SlackUnreachable(type(exc).__name__) from exc
        await asyncio.sleep(delay)
        delay = min(delay * 2, _MAX_RETRY_S)


async def _unless_stopped(
    stop: asyncio.Event, work: Coroutine[Any, Any, T]
) -> tuple[bool, T | None]:
    """(True, `work`'s result) — or (False, None), with `work` cancelled, when `stop` is
    set first."""
    task = asyncio.ensure_future(work)
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if task.cancelled():
        return False, None
    return True, task.result()
