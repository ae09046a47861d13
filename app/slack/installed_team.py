"""Requests from the workspace Orion is installed in, and from no other.

One Slack app, with one signing secret, can be installed in several workspaces, and each
sends correctly signed events and clicks. Orion runs with one workspace's bot token: a
request from another workspace would be answered with it, and that workspace's people
mixed with this one's memories. Bolt's single-team authorization has already asked
`auth.test` whose token it is (its authorize result, cached after the first request); the
request's team is in Bolt's context. A request from any other team is acknowledged (so
Slack does not redeliver it) and dropped before every listener: no Slack call, nothing
stored. Registered before everything else, so it holds over HTTP and Socket Mode alike.

Enterprise Grid: an organisation-wide installation's events may name no team, only the
organisation. Team ids are compared when both the request and the installation have one;
otherwise the organisation (enterprise) ids are, and a match is accepted; a request that
names neither is dropped.
"""

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
