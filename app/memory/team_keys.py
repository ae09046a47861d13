"""Each workspace's keys in distribution mode, and erasing them all when it uninstalls.

The scoping itself is the store's (app/storage/team_scope.py); this module gives it the
memory layout's prefixes: which are deployment-wide (installations, install states,
uninstall tombstones: refused through a workspace's store) and which are a workspace's
(every other one). Erasing a workspace lists only its own prefixes — one listing per kind
of object — never the bucket.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime

from app.memory.key_prefixes import KEY_PREFIXES, TEAM_SCOPED_PREFIXES, UNINSTALLS_PREFIX
from app.storage.store import ObjectStore
from app.storage.team_scope import (
    TeamScopedStore,
    Tenant,
    tenant_prefix,
    tombstone,
    tombstone_key,
)

DEPLOYMENT_PREFIXES = tuple(kind.prefix for kind in KEY_PREFIXES if kind.deployment_wide)
DELETE_CONCURRENCY = 16


def team_scoped(backend: ObjectStore) -> TeamScopedStore:
    return TeamScopedStore(
        backend, deployment_prefixes=DEPLOYMENT_PREFIXES, tombstones_prefix=UNINSTALLS_PREFIX
    )


def uninstall_tombstone_key(tenant: Tenant) -> str:
    return tombstone_key(UNINSTALLS_PREFIX, tenant)


@dataclass(frozen=True)
class TeamErasure:
    tenant: Tenant
    deleted: int


async def erase_team(
    deployment_store: ObjectStore, tenant: Tenant, *, now: datetime | None = None
) -> TeamErasure:
    """Everything of one workspace (or organisation-wide installation), from the store
    beneath every workspace's scope: a tombstone first, so that an event still running
    for it writes nothing back (its writes check it), then every object under its keys."""
    moment = now or datetime.now(UTC)
    await deployment_store.write(uninstall_tombstone_key(tenant), tombstone(moment))
    listings = await asyncio.gather(
        *(deployment_store.list(tenant_prefix(prefix, tenant)) for prefix in TEAM_SCOPED_PREFIXES)
    )
    limit = asyncio.Semaphore(DELETE_CONCURRENCY)

    async def delete(key: str) -> bool:
        async with limit:
            return await deployment_store.delete(key)

    keys = [obj.key for listing in listings for obj in listing]
    deleted = sum(await asyncio.gather(*(delete(key) for key in keys)))
    return TeamErasure(tenant, deleted)
