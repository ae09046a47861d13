"""Distribution mode's middleware (docs/distribution.md): only listed workspaces, each event bound
to its own from Slack's signed ids, counting from just before its authorization."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import structlog
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from app.observability.logging import get_logger
from app.slack.event_scope import Next, event_id_of
from app.slack.oauth.installation_store import tenant_of
from app.storage.team_scope import InvalidTenant, bind_for_this_task

log = get_logger(__name__)


# Bolt's answer to a click with no installation found: storage failing is far likelier than an
# uninstalled workspace (whose clicks Slack no longer sends), so not Bolt's "reinstall".
AUTHORIZE_FAILED_TEXT = (
    "Sorry, I can't reach my records right now. Please try again in a few minutes."
)

# Where `stamp_authorization` leaves its moment in Bolt's request context.
AUTHORIZING_SINCE = "orion_authorizing_since"


async def stamp_authorization(req: AsyncBoltRequest, next: Next) -> BoltResponse:
    """Bolt's `before_authorize`: when this request's authorization began."""
    req.context[AUTHORIZING_SINCE] = datetime.now(UTC)
    return await next()


async def bind_tenant(req: AsyncBoltRequest, next: Next) -> BoltResponse:
    context = req.context
    try:
        tenant = tenant_of(context.enterprise_id, context.team_id, context.is_enterprise_install)
    except InvalidTenant:
        log.warning("slack.tenant.refused", event_id=event_id_of(req.body))
        return BoltResponse(status=200, body="")
    # For the rest of the task: Bolt runs listeners after the middleware chain returned, so
    # a `with` block here would end before them.
    since = context.get(AUTHORIZING_SINCE)
    bind_for_this_task(tenant, since=since if isinstance(since, datetime) else None)
    structlog.contextvars.bind_contextvars(
        team_id=tenant.team_id, enterprise_id=tenant.enterprise_id
    )
    return await next()


def register(app: AsyncApp) -> None:
    app.use(bind_tenant)


# --- distribution mode limited to listed workspaces ------------------------------------
# Every installation's people spend the operator's Claude key (docs/distribution.md,
# "Limiting it to listed workspaces"); uninstall events still pass, as they only erase.

# Events that only erase: let through whatever the list says.
_ERASING_EVENTS = frozenset({"app_uninstalled", "tokens_revoked"})


@dataclass(frozen=True)
class AllowedTeams:
    """The workspaces served: `ids` (team or organisation ids), or every one when None."""

    ids: frozenset[str] | None

    def admit(self, enterprise_id: str | None, team_id: str | None) -> bool:
        if self.ids is None:
            return True
        return any(known is not None and known in self.ids for known in (team_id, enterprise_id))


def _erases(body: object) -> bool:
    event = body.get("event") if isinstance(body, dict) else None
    return isinstance(event, dict) and event.get("type") in _ERASING_EVENTS


Middleware = Callable[[AsyncBoltRequest, Next], Awaitable[BoltResponse]]


def before_authorize(allowed: AllowedTeams, then: Middleware) -> Middleware:
    """Bolt's `before_authorize` (so that a refused request costs no storage read and no
    `auth.test`): `then`, after the check when there is a list."""
    if allowed.ids is None:
        return then

    async def allowed_teams_only(req: AsyncBoltRequest, next: Next) -> BoltResponse:
        context = req.context
        if allowed.admit(context.enterprise_id, context.team_id) or _erases(req.body):
            return await then(req, next)
        log.warning(
            "slack.team_not_allowed",
            event_id=event_id_of(req.body),
            team_id=context.team_id,
            enterprise_id=context.enterprise_id,
        )
        return BoltResponse(status=200, body="")

    return allowed_teams_only
