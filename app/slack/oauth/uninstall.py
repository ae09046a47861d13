"""`app_uninstalled` and `tokens_revoked`: a workspace that removes Orion is forgotten.

Slack sends these without a token to check (Bolt skips `auth.test` for them), signed as
every event is; the workspace is the one Slack's payload names (bound by tenant_binding).
In order:

1. the installation goes (its bot token, refresh token and installer record): from this
   moment no event of the workspace is answered — Bolt finds no token, so no Slack call;
2. the workspace is tombstoned and everything under its keys deleted
   (app/memory/team_keys.py); a turn still running for it writes nothing back.

Slack sends each of these once (it has its acknowledgement before the work begins). If
storage fails, Orion tries again in the background (`FORGET_RETRY_DELAYS_S`); once the
tombstone and the erasure's pending mark are written, the erasure's second pass finishes
whatever is left.

`tokens_revoked` that names bot tokens is the same as an uninstall (Orion cannot act
without one). One that names only people's user tokens removes only their records: Orion
asks for no user scopes, so it keeps none to remove but the installer's.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore

from app.memory.team_keys import erase_team
from app.observability.logging import get_logger
from app.runtime.background import run_in_background
from app.services import ServiceProvider
from app.slack.event_scope import handling
from app.storage.team_scope import Tenant, current_tenant

log = get_logger(__name__)

# After a first attempt that failed (storage down as the workspace uninstalls), Orion tries
# again this many seconds apart: about 20 minutes in all, while the instance runs.
FORGET_RETRY_DELAYS_S = (5.0, 15.0, 60.0, 300.0, 900.0)


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
    tenant = _tenant()
    try:
        await _forget(provider, store, tenant, reason)
    except Exception as exc:
        # Slack has its acknowledgement and sends this event once: Orion tries again.
        log.warning("slack.workspace.forget_failed", error=type(exc).__name__, exc_info=exc)
        run_in_background(
            _forget_later(provider, store, tenant, reason), name="slack.workspace.forget"
        )


async def _forget_later(
    provider: ServiceProvider, store: AsyncInstallationStore, tenant: Tenant, reason: str
) -> None:
    """Until the installation is gone and the erasure has its tombstone and pending mark
    (from then on, its second pass finishes it: app/memory/team_keys.py)."""
    for attempt, delay in enumerate(FORGET_RETRY_DELAYS_S, start=2):
        await asyncio.sleep(delay)
        try:
            await _forget(provider, store, tenant, reason)
            return
        except Exception as exc:
            log.warning(
                "slack.workspace.forget_failed",
                attempt=attempt,
                error=type(exc).__name__,
                exc_info=exc,
            )
    log.error("slack.workspace.forget_abandoned", attempts=len(FORGET_RETRY_DELAYS_S) + 1)


async def _forget(
    provider: ServiceProvider, store: AsyncInstallationStore, tenant: Tenant, reason: str
) -> None:
    started = time.perf_counter()
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
