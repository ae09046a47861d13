"""Distribution mode: every event and click runs as its own workspace
(docs/distribution.md, "Per-workspace memory layout"). Registered after Bolt's
authorization, this binds the workspace — from the ids in Slack's signed payload, as Bolt
read them — to each store operation (app/storage/team_scope.py) and every log line and
trace; ids not of Slack's shape reach no listener. The binding counts from just before
the authorization (`stamp_authorization`): an event that found its installation just before
an uninstall must still count as running before it, or its writes would look newer than
the tombstone and stay."""

from __future__ import annotations

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


# What a click's person reads when Bolt found no installation for it (Bolt answers clicks
# with this itself): storage failing is far likelier than an uninstalled workspace, whose
# clicks Slack no longer sends — so not Bolt's default, which asks them to reinstall.
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
    # For the rest of this request's task: Bolt runs the listeners after its middleware
    # chain has returned (`next()` only lets the chain go on), so a `with` block here
    # would have ended before them.
    since = context.get(AUTHORIZING_SINCE)
    bind_for_this_task(tenant, since=since if isinstance(since, datetime) else None)
    structlog.contextvars.bind_contextvars(
        team_id=tenant.team_id, enterprise_id=tenant.enterprise_id
    )
    return await next()


def register(app: AsyncApp) -> None:
    app.use(bind_tenant)
