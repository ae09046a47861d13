"""Socket Mode (local development): the same Bolt app over Slack's WebSocket."""

from __future__ import annotations

import asyncio
import contextlib
import signal

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.shutdown import drain
from app.slack.web_client import close_connection_pool, share_connection_pool

log = get_logger(__name__)


async def run_socket_mode(
    bolt_app: AsyncApp,
    provider: ServiceProvider,
    *,
    app_token: str,
    stop: asyncio.Event | None = None,
) -> None:
    """Connect and serve until `stop` is set (or SIGINT/SIGTERM), then drain."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        # Signal handlers can only be installed from the main thread (not in tests).
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    provider.warm_up()
    await share_connection_pool(bolt_app.client)
    handler = AsyncSocketModeHandler(bolt_app, app_token)
    await handler.connect_async()
    log.info("orion.socket_mode.connected")
    try:
        await stop.wait()
    finally:
        await handler.disconnect_async()
        await drain(provider)
        await handler.close_async()
        await close_connection_pool(bolt_app.client)
