"""Each workspace's keys in distribution mode, erased in two passes when it uninstalls, listing only
its own prefixes (docs/distribution.md, "Uninstalling erases")."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from app.memory.key_prefixes import KEY_PREFIXES, LEGACY_PREFIXES, TEAM_SCOPED_PREFIXES, UNINSTALLS
from app.observability import tracing
from app.observability.logging import get_logger
from app.storage.store import ObjectInfo, ObjectStore, PreconditionFailed
from app.storage.team_scope import (
    NO_ID,
    InvalidTenant,
    TeamScopedStore,
    Tenant,
    tenant_prefix,
    tombstone,
    tombstone_key,
    tombstone_time,
)

log = get_logger(__name__)

DEPLOYMENT_PREFIXES = tuple(kind.prefix for kind in KEY_PREFIXES if kind.deployment_wide)
DELETE_CONCURRENCY = 16
PENDING_PREFIX = f"{UNINSTALLS.prefix}pending/"
# How long after an uninstall a turn that was running may still write (and take its write
# back): the second pass waits this long. An answer's longest tool loop is minutes.
LATE_WRITES_S = 15 * 60
# How often each instance looks for erasures to finish: one listing of a prefix that is
# empty but for the last LATE_WRITES_S's uninstalls (and any whose pass failed).
FINISH_INTERVAL_S = 5 * 60


def team_scoped(backend: ObjectStore) -> TeamScopedStore:
    return TeamScopedStore(
        backend, deployment_prefixes=DEPLOYMENT_PREFIXES, tombstones_prefix=UNINSTALLS.prefix
    )


def uninstall_tombstone_key(tenant: Tenant) -> str:
    return tombstone_key(UNINSTALLS.prefix, tenant)


@dataclass(frozen=True)
class TeamErasure:
    tenant: Tenant
    deleted: int


async def seal_team(
    deployment_store: ObjectStore, tenant: Tenant, *, now: datetime | None = None
) -> None:
    """The tombstone, so that an event still running for the workspace writes nothing
    back (its writes check it), and the mark that brings the second pass. From here on,
    whatever the first pass cannot delete, the second does."""
    moment = now or datetime.now(UTC)
    await deployment_store.write(uninstall_tombstone_key(tenant), tombstone(moment))
    await deployment_store.write(pending_key(tenant), tombstone(moment))


async def first_pass(deployment_store: ObjectStore, tenant: Tenant) -> TeamErasure:
    """Every object under a sealed workspace's keys, now."""
    return TeamErasure(tenant, await _delete_everything_of(deployment_store, tenant))


def pending_key(tenant: Tenant) -> str:
    return tombstone_key(PENDING_PREFIX, tenant)


async def finish_erasures(
    deployment_store: ObjectStore, *, now: datetime | None = None
) -> list[TeamErasure]:
    """The second pass of every uninstall at least LATE_WRITES_S old that has not had one."""
    cutoff = (now or datetime.now(UTC)) - timedelta(seconds=LATE_WRITES_S)
    finished = []
    for mark in await deployment_store.list(PENDING_PREFIX):
        tenant = _tenant_of_mark(mark.key.removeprefix(PENDING_PREFIX))
        if tenant is None:
            log.warning("memory.team_erasure.unreadable_mark", key=mark.key)
            continue
        try:
            stored = await deployment_store.read(mark.key)
            if stored is None:
                continue  # finished meanwhile (another instance, a reinstall)
            # An unreadable mark counts from when it was written: it is finished too.
            since = tombstone_time(stored.content) or mark.updated
            if since > cutoff:
                continue  # turns may still be running
            finished.append(await _second_pass(deployment_store, tenant, mark.generation))
            # Again, now that Langfuse has processed the traces of the uninstall's last
            # moments (and the uninstall's own); and for an instance that stopped before
            # the first pass got to them. Never raises; logs what it did.
            await tracing.forget_team_traces(tenant.label)
        except Exception as exc:
            # One workspace whose objects cannot be deleted holds up no other's.
            log.warning(
                "memory.team_erasure.failed",
                team_id=tenant.team_id,
                enterprise_id=tenant.enterprise_id,
                exc_info=exc,
            )
    return finished


async def finish_erasure_of(deployment_store: ObjectStore, tenant: Tenant) -> TeamErasure | None:
    """The second pass of `tenant`'s erasure now, if one is pending (before a reinstall)."""
    mark = await deployment_store.read(pending_key(tenant))
    if mark is None:
        return None
    return await _second_pass(deployment_store, tenant, mark.generation)


async def keep_finishing_erasures(
    deployment_store: ObjectStore, *, interval_s: float = FINISH_INTERVAL_S
) -> None:
    """`finish_erasures` now, then every `interval_s`, until cancelled (at shutdown). A
    failure is a warning: the marks stay, and the next round tries again."""
    while True:
        try:
            for erased in await finish_erasures(deployment_store):
                log.info(
                    "memory.team_erasure.finished",
                    team_id=erased.tenant.team_id,
                    enterprise_id=erased.tenant.enterprise_id,
                    objects=erased.deleted,
                )
        except Exception as exc:
            log.warning("memory.team_erasure.failed", exc_info=exc)
        await asyncio.sleep(interval_s)


async def _second_pass(
    deployment_store: ObjectStore, tenant: Tenant, mark_generation: int
) -> TeamErasure:
    deleted = await _delete_everything_of(deployment_store, tenant)
    # Only the mark it read: an uninstall again meanwhile left a newer one, for later.
    with contextlib.suppress(PreconditionFailed):
        await deployment_store.delete(pending_key(tenant), if_generation=mark_generation)
    return TeamErasure(tenant, deleted)


async def _delete_everything_of(deployment_store: ObjectStore, tenant: Tenant) -> int:
    # The earlier layout's prefixes too: what is not moved home yet goes with the rest.
    prefixes = (*TEAM_SCOPED_PREFIXES, *LEGACY_PREFIXES)
    listings = await asyncio.gather(
        *(deployment_store.list(tenant_prefix(prefix, tenant)) for prefix in prefixes)
    )
    limit = asyncio.Semaphore(DELETE_CONCURRENCY)

    async def delete(obj: ObjectInfo) -> bool:
        async with limit:
            try:
                # Only the version listed: one written since is a reinstall's (or a late
                # write, which its own check takes back).
                return await deployment_store.delete(obj.key, if_generation=obj.generation)
            except PreconditionFailed:
                return False

    listed = [obj for listing in listings for obj in listing]
    # Every deletion that can be done is done, and none left running, before a failure
    # is raised (the mark brings the rest in the next pass).
    outcomes = await asyncio.gather(*(delete(obj) for obj in listed), return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
    return sum(1 for outcome in outcomes if outcome is True)


def _tenant_of_mark(ids: str) -> Tenant | None:
    enterprise_id, slash, team_id = ids.partition("/")
    if not slash:
        return None
    try:
        return Tenant(
            None if enterprise_id == NO_ID else enterprise_id, None if team_id == NO_ID else team_id
        )
    except InvalidTenant:
        return None
