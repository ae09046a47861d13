"""`app_uninstalled` and `tokens_revoked`: a workspace that removes Orion is forgotten.

Slack sends these without a token to check (Bolt skips `auth.test` for them), signed as
every event is; the workspace is the one Slack's payload names (bound by tenant_binding).
In order:

1. the installation goes (its bot token, refresh token and installer record): from this
   moment no event of the workspace is answered — Bolt finds no token, so no Slack call;
2. the workspace is tombstoned and everything under its keys deleted
   (app/memory/team_keys.py); a turn still running for it writes nothing back.

`tokens_revoked` that names bot tokens is the same as an uninstall (Orion cannot act
without one). One that names only people's user tokens removes only their records: Orion
asks for no user scopes, so it keeps none to remove but the installer's.
"""

from __future__ import annotations

import time
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore

from app.memory.team_keys import erase_team
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.event_scope import handling
from app.storage.team_scope import Tenant, current_tenant

log = get_logger(__name__)


def register(app: AsyncApp, provider: ServiceProvider, store: AsyncInstallationStore) -> None:
    @app.event("app_uninstalled")
    async def on_uninstalled(body: dict[str, Any]) -> None:
        async with handling("slack.app_uninstalled", body, user=None, channel=None, thread_ts=None):
            await _forget_workspace(provider, store, "app_uninstalled")

    @app.event("tokens_revoked")
    async def on_tokens_revoked(body: dict[str, Any], event: dict[str, Any]) -> None:
        async with handling("slack.tokens_revoked", body, user=None, channel=None, thread_ts=None):
            tokens = event.get("tokens") or {}
            if tokens.get("bot"):
                await _forget_workspace(provider, store, "tokens_revoked")
                return
            tenant = _tenant()
            for user_id in tokens.get("oauth") or []:
                if isinstance(user_id, str):
                    await store.async_delete_installation(
                        enterprise_id=tenant.enterprise_id,
                        team_id=tenant.team_id,
                        user_id=user_id,
                    )


async def _forget_workspace(
    provider: ServiceProvider, store: AsyncInstallationStore, reason: str
) -> None:
    started = time.perf_counter()
    tenant = _tenant()
    # The token first: nothing is answered for the workspace from here on.
    await store.async_delete_all(enterprise_id=tenant.enterprise_id, team_id=tenant.team_id)
    storage = await provider.storage()
    assert storage.deployment_store is not None  # distribution mode builds one
    erased = await erase_team(storage.deployment_store, tenant)
    log.info(
        "slack.workspace.forgotten",
        reason=reason,
        objects=erased.deleted,
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )


def _tenant() -> Tenant:
    tenant = current_tenant()
    if tenant is None:  # tenant_binding runs before every listener in distribution mode
        raise RuntimeError("no workspace bound to this event")
    return tenant
