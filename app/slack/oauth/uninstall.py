"""`app_uninstalled` and `tokens_revoked`: a workspace that removes Orion is forgotten
(docs/distribution.md, "Uninstalling erases"); never sealed twice (a reinstall would go silent)."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore

from app.memory.team_keys import first_pass, seal_team
from app.observability import tracing
from app.observability.logging import get_logger, since
from app.services import ServiceProvider
from app.slack.event_scope import handling
from app.storage.store import ObjectStore
from app.storage.team_scope import Tenant, current_tenant

log = get_logger(__name__)

# After a first attempt that failed (storage down as the workspace uninstalls), Orion tries
# again this many seconds apart: about 20 minutes in all, while the instance runs.
FORGET_RETRY_DELAYS_S = (5.0, 15.0, 60.0, 300.0, 900.0)
# Those retries, held until they end (the loop keeps only weak references to tasks).
_retrying: set[asyncio.Task[None]] = set()


def register(app: AsyncApp, provider: ServiceProvider, store: AsyncInstallationStore) -> None:
    @app.event("app_uninstalled")
    async def on_uninstalled(body: dict[str, Any]) -> None:
        async with handling("slack.app_uninstalled", body):
            await _forget_workspace(provider, store, "app_uninstalled", _sent_at(body))

    @app.event("tokens_revoked")
    async def on_tokens_revoked(body: dict[str, Any], event: dict[str, Any]) -> None:
        async with handling("slack.tokens_revoked", body):
            tokens = event.get("tokens") or {}
            if tokens.get("bot"):
                await _forget_workspace(provider, store, "tokens_revoked", _sent_at(body))
                return
            tenant = _tenant()
            for user_id in tokens.get("oauth") or []:
                if isinstance(user_id, str):
                    await store.async_delete_installation(
                        enterprise_id=tenant.enterprise_id, team_id=tenant.team_id, user_id=user_id
                    )


async def _forget_workspace(
    provider: ServiceProvider, store: AsyncInstallationStore, reason: str, sent: datetime | None
) -> None:
    tenant, uninstalled = _tenant(), datetime.now(UTC)
    started = time.perf_counter()
    try:
        # Slack's `event_time` is whole seconds: only an installation made after that whole
        # second is surely newer than the event (within it, erasing is the safe side).
        if sent is not None and await _reinstalled_since(
            store, tenant, sent + timedelta(seconds=1)
        ):
            # A delayed or redelivered event from before the workspace installed again: the
            # uninstall it tells of was handled then, and the new installation stays.
            log.info("slack.workspace.uninstall_predates_installation", reason=reason)
            return
        await _seal(provider, store, tenant, uninstalled)
    except Exception as exc:
        # Slack has its acknowledgement and sends this event once: Orion tries again.
        log.warning("slack.workspace.forget_failed", exc_info=exc)
        retry = asyncio.create_task(
            _seal_later(provider, store, tenant, uninstalled, reason), name="slack.workspace.forget"
        )
        _retrying.add(retry)
        retry.add_done_callback(_retrying.discard)
        return
    await _first_pass(provider, tenant, reason, started)


async def _seal_later(
    provider: ServiceProvider,
    store: AsyncInstallationStore,
    tenant: Tenant,
    uninstalled: datetime,
    reason: str,
) -> None:
    """Until the installation is gone and the erasure sealed (tombstone and pending mark).
    Not counted as work in flight: a shutdown does not wait out its pauses."""
    try:
        for attempt, delay in enumerate(FORGET_RETRY_DELAYS_S, start=2):
            await asyncio.sleep(delay)
            started = time.perf_counter()
            try:
                if await _reinstalled_since(store, tenant, uninstalled):
                    # The workspace came back meanwhile: this uninstall is over (a later
                    # one brings its own event).
                    log.info("slack.workspace.forget_superseded", attempt=attempt)
                    return
                await _seal(provider, store, tenant, uninstalled)
            except Exception as exc:
                log.warning("slack.workspace.forget_failed", attempt=attempt, exc_info=exc)
                continue
            await _first_pass(provider, tenant, reason, started)
            return
        log.error("slack.workspace.forget_abandoned", attempts=len(FORGET_RETRY_DELAYS_S) + 1)
    except asyncio.CancelledError:
        log.error("slack.workspace.forget_abandoned", reason="shutdown")
        raise


async def _seal(
    provider: ServiceProvider, store: AsyncInstallationStore, tenant: Tenant, moment: datetime
) -> None:
    # The token first: nothing is answered for the workspace from here on.
    await store.async_delete_all(enterprise_id=tenant.enterprise_id, team_id=tenant.team_id)
    await seal_team(_deployment_store(provider), tenant, now=moment)


async def _first_pass(
    provider: ServiceProvider, tenant: Tenant, reason: str, started: float
) -> None:
    """Sealed: what this pass cannot delete, the second pass does (its failure is only
    logged, never tried again from here — a retry would also seal the workspace again).
    Then the workspace's Langfuse traces, which hold its people's messages."""
    try:
        erased = await first_pass(_deployment_store(provider), tenant)
    except Exception as exc:
        log.warning("slack.workspace.first_pass_failed", exc_info=exc)
    else:
        log.info(
            "slack.workspace.forgotten", reason=reason, objects=erased.deleted, **since(started)
        )
    await tracing.forget_team_traces(tenant.label)  # never raises; logs what it did


async def _reinstalled_since(
    store: AsyncInstallationStore, tenant: Tenant, uninstalled: datetime
) -> bool:
    installation = await store.async_find_installation(
        enterprise_id=tenant.enterprise_id,
        team_id=tenant.team_id,
        is_enterprise_install=tenant.team_id is None,
    )
    return installation is not None and installation.installed_at > uninstalled.timestamp()


def _deployment_store(provider: ServiceProvider) -> ObjectStore:
    storage = provider.storage
    assert storage.deployment_store is not None  # distribution mode builds one
    return storage.deployment_store


def _sent_at(body: dict[str, Any]) -> datetime | None:
    """When Slack says the event happened (the envelope's `event_time`), if it says."""
    sent = body.get("event_time")
    if isinstance(sent, bool) or not isinstance(sent, int | float):
        return None
    try:
        return datetime.fromtimestamp(sent, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _tenant() -> Tenant:
    tenant = current_tenant()
    if tenant is None:  # tenant_binding runs before every listener in distribution mode
        raise RuntimeError("no workspace bound to this event")
    return tenant
