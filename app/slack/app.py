"""The Bolt app: the listeners of the configured Slack experience (`SLACK_EXPERIENCE`) and of
channels, all answering with one core (app/slack/conversation/answering.py)."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.middleware.authorization.async_single_team_authorization import (
    AsyncSingleTeamAuthorization,
)
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from app.config import RunMode, Settings, SlackExperience
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack import agent_view, assistant_view, catch_all
from app.slack.channel_view import app_mention, channel_lifecycle, orion_command
from app.slack.conversation import ask_again, feedback, memory_undo
from app.slack.conversation.answering import Answerer
from app.slack.conversation.dedupe import EventDeduplicator
from app.slack.conversation.running_turns import RunningTurns
from app.slack.event_scope import Next, event_id_of
from app.slack.home import controls
from app.slack.home.home_tab import HomeTab
from app.slack.web_client import configure_web_client

log = get_logger(__name__)
APP_NAME = "orion"  # Bolt's loggers' prefix; else Bolt reads the caller's stack to name it


def build_bolt_app(
    settings: Settings,
    provider: ServiceProvider,
    *,
    mode: RunMode,
    turns: RunningTurns | None = None,
) -> AsyncApp:
    """`turns`: the turns this process answers, which shutdown cuts off (app/shutdown.py)."""
    if settings.distribution:
        app = _distribution_app(settings, provider)
    else:
        app = _single_workspace_app(settings, mode)
    dedupe = EventDeduplicator(provider)
    answerer = Answerer(provider, dedupe, turns or RunningTurns())
    home = HomeTab(provider)
    # Before any other app_home_opened listener: Bolt runs the first one that matches.
    controls.register_home_opened(app, home)
    if settings.slack_experience is SlackExperience.AGENT:
        agent_view.register(app, provider, dedupe, answerer)
    else:
        assistant_view.register(app, provider, dedupe, answerer)
    catch_all.register_wrong_experience(app, settings.slack_experience)
    # Orion in channels, the same in both experiences: a mention, what a channel's life does
    # to its memory, and `/orion` with its buttons.
    app_mention.register(app, answerer, dedupe)
    channel_lifecycle.register(app, provider)
    orion_command.register(app, provider)
    feedback.register(app)
    ask_again.register(app, answerer, dedupe, provider)
    memory_undo.register(app, provider)
    controls.register_controls(app, home)
    catch_all.register_ignored(app)  # last: what no listener above wanted
    return app


def _single_workspace_app(settings: Settings, mode: RunMode) -> AsyncApp:
    """One workspace, one bot token (SLACK_BOT_TOKEN), over HTTP or Socket Mode."""
    http = mode is RunMode.HTTP
    signing_secret = settings.slack_signing_secret
    assert settings.slack_bot_token is not None  # load_settings requires one outside distribution
    app = AsyncApp(
        name=APP_NAME,
        token=settings.slack_bot_token.get_secret_value(),
        signing_secret=signing_secret.get_secret_value() if http and signing_secret else None,
        # Socket Mode messages arrive over an authenticated WebSocket, not signed HTTP.
        request_verification_enabled=http,
        # Ack first, work after: Slack retries anything not acked within 3 seconds.
        process_before_response=False,
    )
    configure_web_client(app.client, base_url=settings.slack_api_url)
    # First: a request from another workspace reaches no middleware or listener after it.
    app.use(_installed_team_only)
    return app


async def _installed_team_only(req: AsyncBoltRequest, next: Next) -> BoltResponse:
    """Requests from the workspace Orion is installed in, and no other: one app installed in
    several workspaces gets signed requests from each, and another's people must not meet
    this one's memories (docs/architecture.md, "Rooms inside app/slack")."""
    context, installed = req.context, req.context.authorize_result
    if installed is not None and _same_installation(context, installed):
        return await next()
    log.warning(
        "slack.other_team.ignored",
        event_id=event_id_of(req.body),
        team_id=context.team_id,
        enterprise_id=context.enterprise_id,
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


def share_token_check(app: AsyncApp, answer: AsyncSlackResponse) -> None:
    """Give Bolt the answer to the bot token's check made before serving, or a fresh process's
    first burst asks `auth.test` once per event (a private name: docs/architecture.md, "One
    process per instance; Cloud Run does the rest")."""
    middleware = getattr(app, "_async_middleware_list", ())
    for step in middleware:
        if isinstance(step, AsyncSingleTeamAuthorization):
            step.auth_test_result = answer
            return
    log.warning("slack.token_check_not_shared")


def _distribution_app(settings: Settings, provider: ServiceProvider) -> AsyncApp:
    """Many workspaces (docs/distribution.md), over HTTP only: each installs through
    Slack's OAuth flow, each event is answered with its own workspace's token, and runs
    on its own workspace's keys."""
    from slack_sdk.web.async_client import AsyncWebClient

    from app.slack.oauth import tenant_binding, uninstall
    from app.slack.oauth.flow import build_oauth

    assert settings.slack_signing_secret is not None  # load_settings requires it in HTTP mode
    client = configure_web_client(AsyncWebClient(), base_url=settings.slack_api_url)
    deployment_store = provider.storage.deployment_store
    assert deployment_store is not None  # distribution mode builds one
    oauth_flow = build_oauth(settings, deployment_store, client)
    app = AsyncApp(
        name=APP_NAME,
        signing_secret=settings.slack_signing_secret.get_secret_value(),
        client=client,
        oauth_flow=oauth_flow,  # its settings' authorize answers every request
        # When authorization began, its writes' uninstall check counts from (tenant_binding.py);
        # before that, a workspace not in SLACK_ALLOWED_TEAMS goes no further.
        before_authorize=tenant_binding.before_authorize(
            oauth_flow.allowed, tenant_binding.stamp_authorization
        ),
        user_facing_authorize_error_message=tenant_binding.AUTHORIZE_FAILED_TEXT,
        process_before_response=False,
    )
    # First of Orion's middleware (after Bolt's authorization): the workspace is bound.
    tenant_binding.register(app)
    uninstall.register(app, provider, oauth_flow.settings.installation_store)
    return app
