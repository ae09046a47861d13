"""HTTP mode (Cloud Run): `POST /slack/events`, `/healthz`, `/readyz` and distribution mode's OAuth
routes (docs/interface.md), listening only once everything an answer needs is built."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import FrameType
from typing import Any

import uvicorn
from slack_bolt.adapter.starlette.async_handler import to_starlette_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from app.config import RunMode, Settings
from app.observability.logging import get_logger
from app.runtime.heap import tune_collector_for_serving
from app.runtime.in_flight import in_flight
from app.runtime.port import HOST
from app.runtime.slack_intake import (
    BodyTooLarge,
    MalformedPayload,
    SlackSignature,
    parse_payload,
    read_within_cap,
)
from app.runtime.stop_signals import StopSignals
from app.services import ServiceProvider, start_services
from app.shutdown import Stopping
from app.slack.app import build_bolt_app, share_token_check
from app.slack.conversation.running_turns import RunningTurns
from app.slack.web_client import check_bot_token, close_connection_pool, share_connection_pool

log = get_logger(__name__)

# Bolt's default paths of its OAuth flow (AsyncOAuthSettings), which the flow keeps.
INSTALL_PATH = "/slack/install"
OAUTH_REDIRECT_PATH = "/slack/oauth_redirect"
SERVER_OPTIONS: dict[str, Any] = {
    "log_config": None,  # keep Orion's structured logging
    "access_log": False,
    # Orion never reads the client's address, so the X-Forwarded-* rewriting middleware
    # would only add work to every request.
    "proxy_headers": False,
    # Requests are short (Bolt acknowledges at once): whatever is still open a second
    # after SIGTERM is not worth the drain's time (app/shutdown.py).
    "timeout_graceful_shutdown": 1,
    "lifespan": "on",
}


def build_http_app(
    settings: Settings,
    provider: ServiceProvider,
    bolt: AsyncApp,
    *,
    turns: RunningTurns,
    stopping: Stopping,
) -> Starlette:
    """The routes over a built Bolt app; draining (app/shutdown.py) when the server stops."""
    assert settings.slack_signing_secret is not None  # load_settings requires it in HTTP mode
    signature = SlackSignature(settings.slack_signing_secret.get_secret_value())

    async def slack_events(request: Request) -> Response:
        if stopping.begun:
            # Not acknowledged: Slack delivers it again, to an instance that stays.
            return _unread_refusal("stopping", 503)
        claim = signature.claim(request.headers)
        if claim is None:
            return _unread_refusal("invalid request", 401)
        try:
            body = await read_within_cap(request)
        except BodyTooLarge:
            declared = request.headers.get("content-length")
            log.info("slack.request.too_large", content_length=declared)
            return _unread_refusal("request body too large", 413)
        except ClientDisconnect:
            return Response(status_code=400)  # nobody is left to read it
        text = signature.signed_text(body, claim)
        if text is None:
            return PlainTextResponse("invalid request", status_code=401)
        content_type = request.headers.get("content-type")
        try:
            parse_payload(text, content_type)
        except MalformedPayload as exc:
            # Signed, so Slack's (or someone holding the secret): worth a line.
            log.warning("slack.request.malformed", reason=str(exc), content_type=content_type)
            return PlainTextResponse("malformed request body", status_code=400)
        # The body is signed and parses as Bolt parses it (app/runtime/slack_intake.py).
        bolt_request = AsyncBoltRequest(
            body=text, query=dict(request.query_params), headers=dict(request.headers)
        )
        # Counted from here, so that a drain starting now waits for it: Bolt acknowledges
        # an event and starts its listener as a task, which counts itself
        # (app/slack/event_scope.py) in its first step, one loop turn later.
        in_flight.enter()
        try:
            response = await bolt.async_dispatch(bolt_request)
            await asyncio.sleep(0)
        finally:
            in_flight.leave()
        return to_starlette_response(response)

    async def healthz(_: Request) -> Response:
        return PlainTextResponse("ok")

    async def oauth(request: Request) -> Response:
        """The install page and the redirect back from Slack: Bolt's flow."""
        flow = bolt.oauth_flow
        assert flow is not None  # distribution mode builds it
        bolt_request = AsyncBoltRequest(
            body="", query=request.url.query, headers=dict(request.headers)
        )
        if request.url.path == flow.install_path:
            return to_starlette_response(await flow.handle_installation(bolt_request))
        return to_starlette_response(await flow.handle_callback(bolt_request))

    async def readyz(_: Request) -> Response:
        report = readiness(provider, stopping=stopping.begun)
        status_code = 200 if report["ready"] else 503
        return JSONResponse(report, status_code, headers={"Cache-Control": "no-store"})

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        # On the server's loop: the Web API client's connection pool, the sweeps.
        await share_connection_pool(bolt.client)
        await provider.start()
        yield
        stopping.begin()  # already begun on SIGTERM; the server may stop otherwise (tests)
        await stopping.drain(provider, turns)
        await close_connection_pool(bolt.client)

    routes = [
        Route("/slack/events", slack_events, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
    ]
    if settings.distribution:
        routes += [
            Route(INSTALL_PATH, oauth, methods=["GET"]),
            Route(OAUTH_REDIRECT_PATH, oauth, methods=["GET"]),
        ]
    return Starlette(routes=routes, lifespan=lifespan)


def _unread_refusal(reason: str, status_code: int) -> Response:
    """A refusal sent before the body was read. The connection is kept and the rest of the body
    dropped as it arrives: closing with unread data resets it, and the sender would likely see
    the reset instead of this answer (RFC 9112, section 9.6)."""
    return PlainTextResponse(reason, status_code=status_code)


def readiness(provider: ServiceProvider, *, stopping: bool) -> dict[str, Any]:
    """`GET /readyz` (docs/operations.md, "Health and readiness"): an unreachable bucket is
    *degraded*, not unready, so Cloud Run still starts the instances a burst needs. Reads state
    in memory only; names states, never a token, bucket, URL or error (the endpoint is public)."""
    storage, reason = _storage_check(provider)
    degraded = reason is not None and storage["backend"] == "gcs"
    reasons = ["serving: stopping (SIGTERM); answers in flight drain"] if stopping else []
    return {
        "ready": not stopping and (reason is None or degraded),
        "degraded": degraded,
        "reasons": [*reasons, reason] if reason else reasons,
        "checks": {
            "serving": {"ok": not stopping, "state": "stopping" if stopping else "ready"},
            "storage": storage,
        },
    }


def _storage_check(provider: ServiceProvider) -> tuple[dict[str, Any], str | None]:
    """The store's check, and why it is not ok (None: it is)."""
    from app.storage.breaker import GuardedStore

    store = provider.storage.store
    if not isinstance(store, GuardedStore):  # a local directory: nothing to reach, but
        # it can stop being usable (removed, replaced by a file, made read-only).
        from app.storage.local_directory import directory_problem

        if problem := directory_problem(provider.settings.memory_dir):
            unusable = {"ok": False, "state": "unusable", "backend": "local"}
            return unusable, f"storage: the memory directory (MEMORY_DIR) {problem}"
        return {"ok": True, "state": "ready", "backend": "local"}, None
    from app.storage.store import BucketNotFound, NoCredentials

    reason: str | None = None
    if isinstance(store.outage, BucketNotFound):
        state = "bucket_missing"
        reason = "storage: the bucket GCS_MEMORIES_BUCKET names does not exist"
    elif isinstance(store.outage, NoCredentials):
        state, reason = "no_credentials", "storage: no Google credentials found for the bucket"
    elif not store.available:
        state = "unreachable"
        reason = "storage: unreachable (circuit breaker open until a probe sees it answer)"
    else:
        state = "ready"
    breaker = "closed" if store.available else "open"
    return {"ok": reason is None, "state": state, "backend": "gcs", "breaker": breaker}, reason


async def serve_http(settings: Settings, claimed: socket.socket) -> None:
    """On the already `claimed` $PORT, build everything, then listen until SIGTERM or Ctrl-C,
    then drain. Raises what the build raises (app/cli.py reports it) before listening."""
    try:
        server = await prepare_http(settings)
    except BaseException:
        claimed.close()
        raise
    tune_collector_for_serving()
    log.info("orion.serving", port=settings.port)
    await server.serve(sockets=[claimed])


async def prepare_http(settings: Settings) -> HttpServer:
    """Everything an answer needs, built and checked; the server, not yet listening."""
    provider = await start_services(settings)
    turns = RunningTurns()
    bolt = build_bolt_app(settings, provider, mode=RunMode.HTTP, turns=turns)
    try:
        if not settings.distribution:  # each workspace's token is checked on its events
            share_token_check(bolt, await check_bot_token(bolt.client))
    except BaseException:
        await provider.close()
        raise
    return HttpServer(settings, provider, bolt, turns)


class HttpServer(uvicorn.Server):
    """Orion's app on uvicorn, stopping as every Orion process does (app/runtime/stop_signals.py).
    uvicorn would re-raise the signal once shut down ("killed by signal"; Ctrl-C, a traceback):
    after a clean drain Orion exits 0 instead (uvicorn's public `handle_exit`, `should_exit`)."""

    def __init__(
        self, settings: Settings, provider: ServiceProvider, bolt: AsyncApp, turns: RunningTurns
    ) -> None:
        self.provider, self.turns, self.stopping = provider, turns, Stopping()
        self.app = build_http_app(settings, provider, bolt, turns=turns, stopping=self.stopping)
        super().__init__(uvicorn.Config(self.app, host=HOST, port=settings.port, **SERVER_OPTIONS))
        self._stop_signals = StopSignals(self._stop_gracefully)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self._stop_signals.handle(sig)

    def _stop_gracefully(self) -> None:
        self.stopping.begin()  # safe in a signal handler: it only notes the moment
        self.should_exit = True
