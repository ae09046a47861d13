"""Bolt's OAuth flow, as Orion runs it: `GET /slack/install` and `GET /slack/oauth_redirect`
(docs/distribution.md, "Slack app settings"). Bolt does the protocol; Orion adds where things
are kept and what a failing store shows: Bolt's failure page, never a half-stored install."""

from __future__ import annotations

import logging
import re
from typing import Any

import aiohttp
from slack_bolt.authorization.async_authorize import AsyncInstallationStoreAuthorize
from slack_bolt.error import BoltError
from slack_bolt.oauth.async_callback_options import AsyncFailureArgs
from slack_bolt.oauth.async_oauth_flow import AsyncOAuthFlow
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.oauth.installation_store import Installation
from slack_sdk.web.async_client import AsyncWebClient

from app.config import Settings
from app.observability.logging import get_logger
from app.slack.oauth.installation_store import ObjectStoreInstallationStore
from app.slack.oauth.state_store import DEFAULT_EXPIRATION_S, SignedOAuthStateStore
from app.slack.oauth.tenant_binding import AllowedTeams
from app.storage.store import ObjectStore, StoreError
from app.storage.team_scope import InvalidTenant

log = get_logger(__name__)

# How long before a rotating token expires Bolt refreshes it (Slack's tokens live 12 h).
TOKEN_ROTATION_EXPIRATION_MINUTES = 120
# What the store failing looks like to the flow: it gave up, or ran out of time.
_STORAGE_FAILURES = (StoreError, TimeoutError)
# A code as Slack issues it (`1234.5678.abcdef…`); anything else is not sent on to Slack.
_CODE = re.compile(r"[A-Za-z0-9._-]{1,256}")
# Bolt's flow logs the `code` it failed to exchange (a credential, however short-lived);
# Orion logs its own line instead, without it.
_QUIET = logging.getLogger("app.slack.oauth.bolt_flow")
_QUIET.setLevel(logging.ERROR)


class _NotAllowed(Exception):
    """The workspace that approved the install is not in SLACK_ALLOWED_TEAMS."""


class OrionOAuthFlow(AsyncOAuthFlow):
    # The install page needs no storage: its state is signed, not stored (state_store.py).

    def __init__(self, *, allowed: AllowedTeams, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.allowed = allowed  # SLACK_ALLOWED_TEAMS: installs and events (app/slack/app.py)

    async def handle_callback(self, request: AsyncBoltRequest) -> BoltResponse:
        try:
            return await super().handle_callback(request)
        except _NotAllowed:
            return await self._failure(request, "team_not_allowed", 403)
        except _STORAGE_FAILURES as exc:
            # The state could not be spent: nothing was exchanged or stored.
            log.warning("slack.oauth.install_failed", reason="storage_error", exc_info=exc)
            return await self._failure(request, "storage_error", 503)
        except aiohttp.ClientError as exc:
            # Slack could not be reached to exchange the code: nothing was stored, and the
            # failure page links back to the install.
            log.warning("slack.oauth.install_failed", reason="slack_unreachable", exc_info=exc)
            return await self._failure(request, "slack_unreachable", 502)

    async def run_installation(self, code: str) -> Installation | None:
        if not _CODE.fullmatch(code):
            log.warning("slack.oauth.install_failed", reason="invalid_code", chars=len(code))
            return None
        installation = await super().run_installation(code)
        if installation is None:
            log.warning("slack.oauth.install_failed", reason="invalid_code")
        return installation

    async def store_installation(
        self, request: AsyncBoltRequest, installation: Installation
    ) -> None:
        if not self.allowed.admit(installation.enterprise_id, installation.team_id):
            log.warning(
                "slack.oauth.install_failed",
                reason="team_not_allowed",
                team_id=installation.team_id,
                enterprise_id=installation.enterprise_id,
            )
            await self._revoke(installation)
            raise _NotAllowed
        try:
            await super().store_installation(request, installation)
        except (*_STORAGE_FAILURES, InvalidTenant) as exc:
            log.warning("slack.oauth.install_failed", reason="storage_error", exc_info=exc)
            # Bolt answers a BoltError here with its failure page ("storage_error").
            raise BoltError("the installation could not be stored") from exc
        log.info(
            "slack.oauth.installed",
            team_id=installation.team_id,
            enterprise_id=installation.enterprise_id,
            is_enterprise_install=installation.is_enterprise_install,
            rotating=installation.bot_refresh_token is not None,
        )

    async def _revoke(self, installation: Installation) -> None:
        """The token Slack issued for a refused install goes too: Orion keeps none, and the
        workspace is left without it. Best effort: a failure is logged, the refusal stands."""
        try:
            await self.client.auth_revoke(token=installation.bot_token)
        except (SlackApiError, aiohttp.ClientError) as exc:
            log.warning("slack.oauth.revoke_failed", exc_info=exc)

    async def _failure(self, request: AsyncBoltRequest, reason: str, status: int) -> BoltResponse:
        return await self.failure_handler(
            AsyncFailureArgs(
                request=request,
                reason=reason,
                suggested_status_code=status,
                settings=self.settings,
                default=self.default_callback_options,
            )
        )


def build_oauth(settings: Settings, store: ObjectStore, client: AsyncWebClient) -> OrionOAuthFlow:
    """The flow and each request's per-workspace `authorize`, on `store` (the deployment store)
    and `client` (Orion's Web API client: SLACK_API_URL, retries)."""
    assert settings.slack_client_id is not None and settings.slack_client_secret is not None
    client_secret = settings.slack_client_secret.get_secret_value()
    installation_store = ObjectStoreInstallationStore(store)
    oauth_settings = AsyncOAuthSettings(
        client_id=settings.slack_client_id,
        client_secret=client_secret,
        scopes=settings.bot_scopes,
        user_scopes=[],
        redirect_uri=settings.slack_oauth_redirect_url,
        authorization_url=settings.slack_authorize_url,
        installation_store=installation_store,
        state_store=SignedOAuthStateStore(
            store, client_secret, expiration_seconds=DEFAULT_EXPIRATION_S
        ),
        state_expiration_seconds=DEFAULT_EXPIRATION_S,
        # Bot tokens only, rotated at most once per event: through the installation records
        # Bolt would rotate one refresh token twice, and Slack refuses a reused one.
        installation_store_bot_only=True,
        token_rotation_expiration_minutes=TOKEN_ROTATION_EXPIRATION_MINUTES,
    )
    # Bolt's own, but with Orion's client: a token rotation (oauth.v2.access) goes to
    # SLACK_API_URL like every other call.
    oauth_settings.authorize = AsyncInstallationStoreAuthorize(
        logger=logging.getLogger(__name__),
        installation_store=installation_store,
        client_id=settings.slack_client_id,
        client_secret=client_secret,
        token_rotation_expiration_minutes=TOKEN_ROTATION_EXPIRATION_MINUTES,
        bot_only=True,
        client=client,
    )
    return OrionOAuthFlow(
        client=client,
        settings=oauth_settings,
        logger=_QUIET,
        allowed=AllowedTeams(settings.allowed_teams),
    )
