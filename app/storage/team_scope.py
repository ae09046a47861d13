"""One deployment, many workspaces: each one's objects under its own keys, bound per event from
Slack's signed ids (docs/distribution.md); a write after its workspace's uninstall is taken back."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from app.observability.logging import get_logger
from app.storage.deadline import own_deadline
from app.storage.store import (
    ObjectInfo,
    ObjectStore,
    StoredObject,
    StoreError,
    StoreLayer,
    Unchanged,
    read_if_changed,
)

log = get_logger(__name__)

# Slack's id shapes: T… for a workspace, E… for an organisation. Nothing else (a path, a
# dot, a lower-case letter) may become a key segment.
_TEAM_ID = re.compile(r"T[A-Z0-9]{2,30}")
_ENTERPRISE_ID = re.compile(r"E[A-Z0-9]{2,30}")
# The segment inserted after each key's first one; "-" where the id is absent.
TENANTS_SEGMENT = "teams"
NO_ID = "-"
# How long a write's uninstall check (and taking the write back) may take, whatever is
# left of its caller's storage deadline.
UNINSTALL_CHECK_BUDGET_S = 5.0
# Read unscoped: the breaker's health probe names nobody's object.
_UNSCOPED_READS = ("health/",)


def is_slack_team_id(value: str) -> bool:
    """Whether `value` has the shape of a workspace (T…) or organisation (E…) id."""
    return bool(_TEAM_ID.fullmatch(value) or _ENTERPRISE_ID.fullmatch(value))


class TenantNotBound(StoreError):
    """A scoped operation ran with no tenant bound (a bug: refused, never guessed)."""


class TenantUninstalled(StoreError):
    """The tenant was uninstalled while this event ran: what it wrote was taken back."""


class InvalidTenant(ValueError):
    """A team or enterprise id that is not Slack's shape."""


@dataclass(frozen=True, slots=True)
class Tenant:
    """One installation's ids: a workspace (`team_id`, with its organisation's id when it
    belongs to one) or a whole organisation (`team_id` None)."""

    enterprise_id: str | None
    team_id: str | None

    def __post_init__(self) -> None:
        if self.team_id is None and self.enterprise_id is None:
            raise InvalidTenant("neither a team nor an enterprise id")
        if self.team_id is not None and not _TEAM_ID.fullmatch(self.team_id):
            raise InvalidTenant("not a Slack team id")
        if self.enterprise_id is not None and not _ENTERPRISE_ID.fullmatch(self.enterprise_id):
            raise InvalidTenant("not a Slack enterprise id")

    @property
    def segment(self) -> str:
        """`teams/{enterprise_id or -}/{team_id or -}`: one key segment per tenant."""
        return f"{TENANTS_SEGMENT}/{self.enterprise_id or NO_ID}/{self.team_id or NO_ID}"

    @property
    def label(self) -> str:
        """How logs name it."""
        return self.team_id or self.enterprise_id or NO_ID


@dataclass(frozen=True, slots=True)
class _Binding:
    tenant: Tenant
    since: datetime  # when the event began: an uninstall at or after it stops its writes


_bound: ContextVar[_Binding | None] = ContextVar("orion_tenant", default=None)


@contextmanager
def bound_tenant(tenant: Tenant) -> Iterator[Tenant]:
    """Scope every store operation inside (and in tasks started inside) to `tenant`."""
    token = _bound.set(_Binding(tenant, datetime.now(UTC)))
    try:
        yield tenant
    finally:
        _bound.reset(token)


def bind_for_this_task(tenant: Tenant, *, since: datetime | None = None) -> None:
    """Scope the current task (and those it starts) to `tenant` from here on: Bolt runs listeners
    after its middleware returned, outside any block; each request's task ends the binding.
    `since`: when the event began (before its authorization), if earlier than now."""
    _bound.set(_Binding(tenant, since or datetime.now(UTC)))


def current_tenant() -> Tenant | None:
    binding = _bound.get()
    return binding.tenant if binding is not None else None


def tombstone_key(tombstones_prefix: str, tenant: Tenant) -> str:
    """Where the tenant's uninstall tombstone lives: deployment-wide, by its ids."""
    return f"{tombstones_prefix}{tenant.enterprise_id or NO_ID}/{tenant.team_id or NO_ID}"


def tombstone(moment: datetime) -> str:
    return json.dumps({"uninstalled_at": moment.isoformat()})


def uninstalled_at(stored: StoredObject | None) -> datetime | None:
    if stored is None:
        return None
    # Unreadable: taken as uninstalled now — erring towards writing nothing.
    return tombstone_time(stored.content) or datetime.now(UTC)


def tombstone_time(content: str) -> datetime | None:
    """The moment a tombstone (or a pending mark) holds; None when unreadable."""
    try:
        moment = datetime.fromisoformat(json.loads(content)["uninstalled_at"])
    except (ValueError, KeyError, TypeError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def scoped_key(tenant: Tenant, key: str) -> str:
    kind, slash, rest = key.partition("/")
    if not slash or not kind:
        raise ValueError(f"a key without a prefix cannot be scoped: {key!r}")
    return f"{kind}/{tenant.segment}/{rest}"


def unscoped_key(tenant: Tenant, key: str) -> str:
    kind, _, rest = key.partition("/")
    return f"{kind}/{rest.removeprefix(tenant.segment + '/')}"


def tenant_prefix(kind_prefix: str, tenant: Tenant) -> str:
    """Where every object of one kind (`users/`) of one tenant lives."""
    return f"{kind_prefix}{tenant.segment}/"


# Write-and-check units whose caller stopped waiting: held until they end (the loop keeps
# only weak references to tasks).
_unsplit: set[asyncio.Future[int]] = set()


def _finished_unit(unit: asyncio.Future[int]) -> None:
    _unsplit.discard(unit)
    if not unit.cancelled():
        # Retrieved, so an abandoned unit's failure is not reported as never retrieved: its
        # caller, if still waiting, has it; one that stopped waiting no longer cares.
        unit.exception()


class TeamScopedStore(StoreLayer):
    """An `ObjectStore` whose keys are the bound tenant's. `deployment_prefixes` (installations,
    states, tombstones) are refused: only the store beneath reaches them. `tombstones_prefix`:
    where uninstalls leave their tombstones."""

    def __init__(
        self, inner: ObjectStore, *, deployment_prefixes: tuple[str, ...], tombstones_prefix: str
    ) -> None:
        super().__init__(inner)
        self._deployment_prefixes = deployment_prefixes
        self._tombstones_prefix = tombstones_prefix

    async def read(self, key: str) -> StoredObject | None:
        if key.startswith(_UNSCOPED_READS):
            return await self.inner.read(key)
        stored = await self.inner.read(scoped_key(self._binding_for(key).tenant, key))
        return replace(stored, key=key) if stored is not None else None

    async def read_if_changed(self, key: str, generation: int) -> StoredObject | Unchanged | None:
        if key.startswith(_UNSCOPED_READS):
            return await read_if_changed(self.inner, key, generation)
        scoped = scoped_key(self._binding_for(key).tenant, key)
        stored = await read_if_changed(self.inner, scoped, generation)
        return replace(stored, key=key) if isinstance(stored, StoredObject) else stored

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        binding = self._binding_for(key)
        unit = asyncio.ensure_future(
            self._checked_write(binding, scoped_key(binding.tenant, key), content, if_generation)
        )
        _unsplit.add(unit)
        unit.add_done_callback(_finished_unit)
        # The caller may stop waiting; the write and its check go on to the end together.
        return await asyncio.shield(unit)

    async def _checked_write(
        self, binding: _Binding, scoped: str, content: str, if_generation: int | None
    ) -> int:
        generation = await self.inner.write(scoped, content, if_generation=if_generation)
        await self._unless_uninstalled(binding, scoped, generation)
        return generation

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        scoped = scoped_key(self._binding_for(key).tenant, key)
        return await self.inner.delete(scoped, if_generation=if_generation)

    async def list(self, prefix: str) -> list[ObjectInfo]:
        tenant = self._binding_for(prefix).tenant
        found = await self.inner.list(scoped_key(tenant, prefix))
        return [replace(o, key=unscoped_key(tenant, o.key)) for o in found]

    async def _unless_uninstalled(self, binding: _Binding, key: str, generation: int) -> None:
        where = tombstone_key(self._tombstones_prefix, binding.tenant)
        try:
            # Its own budget: the caller's may be spent by the write itself.
            with own_deadline(UNINSTALL_CHECK_BUDGET_S):
                stored = await self.inner.read(where)
        except Exception as exc:
            # The write stands unchecked: if an uninstall came meanwhile, its second pass
            # (app/memory/team_keys.py) is what deletes it.
            log.warning("storage.uninstall_check.failed", exc_info=exc)
            raise
        tombstoned = uninstalled_at(stored)
        if tombstoned is None or tombstoned < binding.since:
            return
        # Only the version this write made: a newer one is someone else's to answer for
        # (the erasure's own deletions, or that write's check, see it).
        with contextlib.suppress(StoreError), own_deadline(UNINSTALL_CHECK_BUDGET_S):
            await self.inner.delete(key, if_generation=generation)
        raise TenantUninstalled(f"{binding.tenant.label} was uninstalled during this event")

    def _binding_for(self, key: str) -> _Binding:
        if key.startswith(self._deployment_prefixes):
            raise ValueError("a deployment-wide key is never a tenant's")
        binding = _bound.get()
        if binding is None:
            raise TenantNotBound("no Slack team is bound to this operation")
        return binding
