"""Distribution mode limited to listed workspaces (SLACK_ALLOWED_TEAMS: team ids, or an
Enterprise Grid organisation's id, which admits its installations), since every
installation's people spend the operator's Claude key (docs/distribution.md, "Limiting it
to listed workspaces"). An install by any other is refused after Slack's exchange, its
token revoked; an event or click of any other is acknowledged and dropped before every
listener — except `app_uninstalled` and `tokens_revoked`, which only ever erase."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from app.observability.logging import get_logger
from app.slack.event_scope import Next, event_id_of

log = get_logger(__name__)

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
