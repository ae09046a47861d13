"""HTTP mode (Cloud Run): Starlette routes `POST /slack/events`, `GET /healthz` (liveness:
the process answers) and `GET /readyz` (readiness: whether Orion can do its job now, and if
not, why; app/readiness.py). In distribution mode also `GET /slack/install` and
`GET /slack/oauth_redirect`, Bolt's OAuth flow (app/slack/oauth/flow.py).

The server listens before Bolt is imported: Bolt (and then the heavy clients) load in
the background and `/healthz` answers at once. Events and clicks are acknowledged as soon
as their signature checks out and handed to Bolt in the background (app/runtime/early_ack.py)
once the acknowledgements around them are done (app/runtime/ack_first.py), so neither a cold
start nor a burst of events delays an acknowledgement.

Every request to `/slack/events` is taken in the same way, whatever it turns out to be:
signature headers checked (401) and the declared size (413) before the body is read; the
body read within a cap (app/runtime/capped_body.py, 413); its signature verified (401);
only then parsed, once (app/runtime/slack_payload.py, 400 when Bolt could not handle it).

With `HTTP_WORKERS` above 1, that many such servers run, one process each, on one
listening socket (app/http_workers.py).
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from app.config import RunMode, Settings
from app.http_workers import HOST, SERVER_OPTIONS
from app.observability.event_context import event_context
from app.observability.logging import get_logger
from app.readiness import readiness, ready_here
from app.runtime.ack_first import AckFirst
from app.runtime.background import run_in_background
from app.runtime.capped_body import BodyTooLarge, read_within_cap
from app.runtime.early_ack import acks_early
from app.runtime.slack_auth import SlackAuthCheck
from app.runtime.slack_payload import MalformedPayload, parse_payload
from app.runtime.slack_signature import SlackSignature
from app.runtime.stop_signals import StopSignals
from app.runtime.worker_siblings import WorkerSiblings
from app.services import ServiceProvider
from app.shutdown import drain

if TYPE_CHECKING:
    from slack_bolt.async_app import AsyncApp

log = get_logger(__name__)

BoltFactory = Callable[[], "AsyncApp"]
# Bolt's default paths of its OAuth flow (AsyncOAuthSettings), which the flow keeps.
INSTALL_PATH = "/slack/install"
OAUTH_REDIRECT_PATH = "/slack/oauth_redirect"
# How often a worker of several looks whether its own checks pass yet (in-memory state).
READY_POLL_S = 0.2


class BoltLoader:
    """Builds the Bolt app in a worker thread once the server is up; requests await it."""

    def __init__(self, build: BoltFactory, on_ready: Callable[[AsyncApp], None]) -> None:
        self._build = build
        self._on_ready = on_ready
        self._task: asyncio.Task[AsyncApp] | None = None
        self.app: AsyncApp | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._load())

    async def get(self) -> AsyncApp:
        self.start()
        assert self._task is not None
        return await asyncio.shield(self._task)

    async def _load(self) -> AsyncApp:
        from app.slack.web_client import share_connection_pool

        app = await asyncio.to_thread(self._build)
        await share_connection_pool(app.client)
        self.app = app
        log.info("slack.bolt.ready")
        self._on_ready(app)
        return self.app


def build_http_app(
    settings: Settings, provider: ServiceProvider, *, build_bolt: BoltFactory | None = None
) -> Starlette:
    slack_auth = SlackAuthCheck()

    def bolt_ready(bolt: AsyncApp) -> None:
        provider.warm_up()
        if not settings.distribution:  # each workspace's token is checked per event there
            slack_auth.start(bolt.client)

    loader = BoltLoader(build_bolt or (lambda: _build_bolt(settings, provider)), bolt_ready)
    assert settings.slack_signing_secret is not None  # load_settings requires it in HTTP mode
    signature = SlackSignature(settings.slack_signing_secret.get_secret_value())
    ack_first = AckFirst()

    async def slack_events(request: Request) -> Response:
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
            payload = parse_payload(text, content_type)
        except MalformedPayload as exc:
            # Signed, so Slack's (or someone holding the secret): worth a line.
            log.warning("slack.request.malformed", reason=str(exc), content_type=content_type)
            return PlainTextResponse("malformed request body", status_code=400)
        if acks_early(payload):
            ack_first.acknowledged()
            _dispatch_when_ready(
                loader, ack_first, text, payload, dict(request.headers), dict(request.query_params)
            )
            return Response(status_code=200)
        bolt = await loader.get()
        return await _dispatch(bolt, request, text)

    async def healthz(_: Request) -> Response:
        return PlainTextResponse("ok")

    async def oauth(request: Request) -> Response:
        """The install page and the redirect back from Slack: Bolt's flow."""
        from slack_bolt.adapter.starlette.async_handler import to_starlette_response
        from slack_bolt.request.async_request import AsyncBoltRequest

        flow = (await loader.get()).oauth_flow
        assert flow is not None  # distribution mode builds it
        bolt_request = AsyncBoltRequest(
            body="", query=request.url.query, headers=dict(request.headers)
        )
        if request.url.path == flow.install_path:
            return to_starlette_response(await flow.handle_installation(bolt_request))
        return to_starlette_response(await flow.handle_callback(bolt_request))

    async def readyz(_: Request) -> Response:
        report = readiness(provider, None if settings.distribution else slack_auth)
        return JSONResponse(
            report.as_json(),
            status_code=200 if report.ready else 503,
            headers={"Cache-Control": "no-store"},
        )

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        loader.start()
        siblings = provider.worker_siblings
        announcing: asyncio.Task[None] | None = None
        if siblings is not None:
            await _listen_for(siblings)
            auth = None if settings.distribution else slack_auth
            announcing = asyncio.create_task(
                _say_ready_when(siblings, lambda: ready_here(provider, auth)),
                name="orion.worker.say_ready",
                context=contextvars.Context(),
            )
        yield
        if announcing is not None:
            announcing.cancel()
        await slack_auth.close()
        await drain(provider)  # a sibling may still stop a turn that is draining
        if siblings is not None:
            await siblings.close()
        if loader.app is not None:
            from app.slack.web_client import close_connection_pool

            await close_connection_pool(loader.app.client)

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
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.bolt = loader
    return app


async def _listen_for(siblings: WorkerSiblings) -> None:
    try:
        await siblings.listen()
    except OSError as exc:  # the worker still serves; a Stop then reaches its turns only
        log.error("orion.worker.siblings_unreachable", exc_info=exc)


async def _say_ready_when(siblings: WorkerSiblings, ready: Callable[[], bool]) -> None:
    """Tell the siblings once this worker's own checks pass (what /readyz counts). Until it
    has, the instance's /readyz waits for this worker and says so."""
    try:
        # Several states make it (builds, the store's first answer, Slack's auth.test),
        # none with an event of its own: looked at, cheaply, until they all pass.
        while not ready():  # noqa: ASYNC110
            await asyncio.sleep(READY_POLL_S)
        siblings.mark_ready()
    except Exception as exc:  # OSError: the siblings' directory cannot be written
        log.error("orion.worker.ready_unsaid", error=type(exc).__name__, exc_info=exc)
        return
    log.info("orion.worker.ready")


def _build_bolt(settings: Settings, provider: ServiceProvider) -> AsyncApp:
    from app.slack.app import build_bolt_app

    return build_bolt_app(settings, provider, mode=RunMode.HTTP)


def _unread_refusal(reason: str, status_code: int) -> Response:
    """A refusal sent before the body was read (all of it, or at all). The connection is
    kept, and the server drops the rest of the body as it arrives, holding none of it:
    closing a connection with unread data resets it, and the sender (or a proxy in front)
    would likely see the reset instead of this answer (RFC 9112, section 9.6)."""
    return PlainTextResponse(reason, status_code=status_code)


async def _dispatch(bolt: AsyncApp, request: Request, text: str) -> Response:
    from slack_bolt.adapter.starlette.async_handler import to_starlette_response
    from slack_bolt.request.async_request import AsyncBoltRequest

    # The body is signed and parses as Bolt parses it (app/runtime/slack_payload.py).
    bolt_request = AsyncBoltRequest(
        body=text, query=dict(request.query_params), headers=dict(request.headers)
    )
    return to_starlette_response(await bolt.async_dispatch(bolt_request))


def _dispatch_when_ready(
    loader: BoltLoader,
    ack_first: AckFirst,
    text: str,
    payload: dict[str, Any],
    headers: dict[str, str | Sequence[str]],  # as Bolt's request takes them
    query: dict[str, str],
) -> None:
    """Hand an already-acknowledged request to Bolt once it has loaded and the
    acknowledgements around it are done."""

    async def dispatch() -> None:
        from slack_bolt.request.async_request import AsyncBoltRequest

        await ack_first.wait()
        bolt = await loader.get()
        bolt_request = AsyncBoltRequest(body=text, query=query, headers=headers)
        response = await bolt.async_dispatch(bolt_request)
        # Handled events log their own line; one no listener matched (Bolt's 404) only here.
        emit = log.debug if response.status == 200 else log.info
        emit("slack.early_ack.dispatched", bolt_status=response.status)

    # Tracked like any listener's background work, so shutdown waits for it; with the
    # event's ids bound, so whatever it logs (a failure too) names the event's trace.
    with _event_ids(payload):
        run_in_background(dispatch(), name="slack.early_ack", person_waits=True)


@contextmanager
def _event_ids(payload: dict[str, Any]) -> Iterator[None]:
    """The event's log context, for an Events API payload (a click has no event id)."""
    event_id = payload.get("event_id")
    if not isinstance(event_id, str):
        yield
        return
    event = payload.get("event")
    event = event if isinstance(event, dict) else {}
    thread = event.get("assistant_thread")
    thread = thread if isinstance(thread, dict) else {}
    with event_context(
        event_id=event_id,
        user=event.get("user") or thread.get("user_id"),
        channel=event.get("channel") or thread.get("channel_id"),
        thread_ts=event.get("thread_ts") or thread.get("thread_ts"),
    ):
        yield


def serve_http(app: Starlette, *, port: int) -> None:
    import uvicorn

    class Server(uvicorn.Server):
        """Stops as every Orion process does (app/runtime/stop_signals.py): gracefully on
        the first SIGINT or SIGTERM, at once on a second, and within a bounded time.
        uvicorn itself would re-raise the signal once it has shut down, so the process
        would end "killed by signal" (and Ctrl-C with a KeyboardInterrupt traceback);
        after a clean drain Orion exits 0 instead (uvicorn's public `handle_exit` and
        `should_exit`)."""

        def __init__(self, config: uvicorn.Config) -> None:
            super().__init__(config)
            self._stop_signals = StopSignals(self._stop_gracefully)

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            self._stop_signals.handle(sig)

        def _stop_gracefully(self) -> None:
            self.should_exit = True

    Server(uvicorn.Config(app, host=HOST, port=port, **SERVER_OPTIONS)).run()
