"""Requests from the workspace Orion is installed in, and from no other: one Slack app can be
installed in several workspaces, each sending correctly signed requests, and Orion runs
with one workspace's token, so another's people must not meet this one's memories. A
request of any other team (Bolt's single-team authorization has asked `auth.test` whose
token it is) is acknowledged and dropped before every listener, over HTTP and Socket Mode
alike. Enterprise Grid: team ids are compared when both sides have one, otherwise the
organisation's; a request naming neither is dropped."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.middleware.async_middleware import AsyncMiddleware
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from app.observability.logging import get_logger
from app.slack.event_scope import event_id_of

log = get_logger(__name__)


class InstalledTeamOnly(AsyncMiddleware):
    async def async_process(
        self,
        *,
        req: AsyncBoltRequest,
        resp: BoltResponse,
        next: Callable[[], Awaitable[BoltResponse]],  # the keyword Bolt calls it with
    ) -> BoltResponse | None:
        installed = req.context.authorize_result
        if installed is not None and _same_installation(req.context, installed):
            return await next()
        log.warning(
            "slack.other_team.ignored",
            event_id=event_id_of(req.body),
            team_id=req.context.team_id,
            enterprise_id=req.context.enterprise_id,
            installed_team_id=installed.team_id if installed else None,
            installed_enterprise_id=installed.enterprise_id if installed else None,
        )
        return BoltResponse(status=200, body="")


def _same_installation(request: AsyncBoltContext, installed: AuthorizeResult) -> bool:
    if request.team_id and installed.team_id:
        return request.team_id == installed.team_id
    if request.enterprise_id and installed.enterprise_id:
        return request.enterprise_id == installed.enterprise_id
    return False


def register(app: AsyncApp) -> None:
    app.use(InstalledTeamOnly())
