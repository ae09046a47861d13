"""HTTP mode (Cloud Run): Starlette routes `POST /slack/events` and `GET /healthz`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.shutdown import drain

log = get_logger(__name__)


def build_http_app(bolt_app: AsyncApp, provider: ServiceProvider) -> Starlette:
    handler = AsyncSlackRequestHandler(bolt_app)

    async def slack_events(request: Request) -> Response:
        try:
            return await handler.handle(request)
        except ValueError:
            # Bolt parses the body before anything else; garbage is a bad request, not a crash.
            log.warning("slack.request.malformed", content_type=request.headers.get("content-type"))
            return PlainTextResponse("malformed request body", status_code=400)

    async def healthz(_: Request) -> Response:
        return PlainTextResponse("ok")

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        provider.warm_up()
        yield
        await drain()

    return Starlette(
        routes=[
            Route("/slack/events", slack_events, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
        ],
        lifespan=lifespan,
    )


def serve_http(app: Starlette, *, port: int) -> None:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn re-raises SIGTERM once it has shut down gracefully, so the process would
        end "killed by signal" (-15). After a clean drain Orion exits 0 instead."""

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                yield
                self._captured_signals.clear()

    config = uvicorn.Config(
        app,
        host="0.0.0.0",
        port=port,
        log_config=None,  # keep Orion's structured logging
        access_log=False,
        timeout_graceful_shutdown=8,
        lifespan="on",
    )
    Server(config).run()
