"""The composition root: store, tracing, Claude client and agent built once, before Orion serves, so
no event is acknowledged that could not be answered (docs/architecture.md), and the sweeps."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
from contextvars import Context
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from app.config import Settings, StorageSettings
from app.observability.logging import get_logger

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

    from app.agent.turn import Agent
    from app.memory.retention import SessionRetention
    from app.storage.store import ObjectStore

log = get_logger(__name__)


@dataclass(frozen=True)
class Storage:
    """Everything a greeting needs from the store."""

    # Orion's own records (thread contexts, event claims) live in `store` always; memory
    # reads and writes go through `memory_store`, which is None when memory is switched off.
    store: ObjectStore
    memory_store: ObjectStore | None
    # Distribution mode only: the store beneath every team's scope, for the deployment's
    # own records — installations (tokens: never redacted, never a team's), install
    # states, uninstall tombstones — and the retention sweep across teams. None otherwise.
    deployment_store: ObjectStore | None = None


@dataclass(frozen=True)
class Services:
    settings: Settings
    storage: Storage
    claude: AsyncAnthropic
    agent: Agent


# How long the start waits for the store to connect before building the rest: a connect can
# hang on credentials (docs/architecture.md, "Inside app/storage"), and the Claude client must
# not wait for it; the connect goes on, each store operation waiting within its own deadline.
STORE_CONNECT_WAIT_S = 2.0
MARK_RETRY_S = 5.0


def build_storage(settings: StorageSettings) -> Storage:
    """The bucket `GCS_MEMORIES_BUCKET` names, else the directory `MEMORY_DIR` (it connects in
    `Store.connect()`), with the rules of what Orion may keep layered once beneath every reader
    and writer (docs/architecture.md, "Inside app/storage")."""
    from app.memory.homes import expires_with_conversations
    from app.memory.secret_free_store import kept
    from app.memory.shared_context import SharedContextCache
    from app.memory.team_keys import team_scoped

    bucket = settings.gcs_memories_bucket
    backend: ObjectStore
    if bucket:
        from app.storage.gcs import GcsObjectStore

        backend = GcsObjectStore(bucket, expires=expires_with_conversations)
    else:
        from app.storage.local_directory import LocalDirectoryStore

        backend = LocalDirectoryStore(settings.memory_dir)
    layered = team_scoped(backend) if settings.keys_per_team else backend
    store = kept(layered, session_retention(settings))
    if bucket:
        from app.storage.breaker import GuardedStore

        store = GuardedStore(store)
    deployment_store = backend if settings.keys_per_team else None
    if not settings.memory_enabled:
        return Storage(store=store, memory_store=None, deployment_store=deployment_store)
    # Above the breaker: while storage is down, a context read moments ago still serves.
    shared = SharedContextCache(store, max_age_s=settings.memory_global_context_max_age_s)
    return Storage(store=store, memory_store=shared, deployment_store=deployment_store)


def whole_store(storage: Storage, settings: StorageSettings) -> ObjectStore:
    """Every workspace's keys at once (distribution mode: beneath their scopes), as Orion
    keeps memories: what moving the old layout home works on (app/learning/upgrade.py)."""
    if storage.deployment_store is None:
        return storage.store
    from app.memory.secret_free_store import kept

    return kept(storage.deployment_store, session_retention(settings))


def session_retention(settings: StorageSettings) -> SessionRetention:
    from app.memory.retention import SessionRetention

    return SessionRetention(days=settings.memory_session_retention_days)


def build_services(settings: Settings, storage: Storage) -> Services:
    from app.agent.thinking import Thinking
    from app.agent.turn import Agent, MemorySettings
    from app.observability import tracing

    if settings.tracing_enabled:
        tracing.configure_tracing(settings)
    claude = build_claude_client(settings)
    agent = Agent(
        claude=claude,
        model=settings.anthropic_model,
        store=storage.memory_store,
        memory=MemorySettings(
            summary_model=settings.summary_model,
            summary_timeout_s=settings.summary_timeout_s,
            summary_thinking=Thinking(settings.summary_thinking, settings.summary_effort),
            after_turn_budget_s=settings.memory_after_turn_timeout_s,
            notes_shown_by_default=settings.memory_notes,
        ),
        thinking=Thinking(settings.anthropic_thinking, settings.anthropic_effort),
    )
    return Services(settings=settings, storage=storage, claude=claude, agent=agent)


def build_claude_client(settings: Settings) -> AsyncAnthropic:
    """Orion's one Claude client (bench/claude_baseline.py measures this same client)."""
    import httpx2
    from anthropic import AsyncAnthropic, DefaultAioHttpClient

    return AsyncAnthropic(
        api_key=settings.anthropic_api_key.get_secret_value(),
        base_url=settings.anthropic_base_url,
        max_retries=settings.anthropic_max_retries,
        timeout=settings.anthropic_timeout_s,
        # Orion records its own generation per call (app/agent/loop.py): the SDK's spans
        # would duplicate it in Langfuse (docs/benchmarks.md, "Measured once…").
        open_telemetry=False,
        # aiohttp rather than httpcore: less CPU per call and no scan of every idle
        # connection per request (docs/benchmarks.md, "Measured once…").
        http_client=DefaultAioHttpClient(limits=httpx2.Limits(max_connections=200)),
    )


async def start_services(settings: Settings) -> ServiceProvider:
    """Build everything an answer needs on the running loop, before serving, and ask the store
    one thing, within a bound (no answer: the breaker opens, Orion serves degraded)."""
    storage = build_storage(settings)
    connecting = asyncio.ensure_future(_connect(storage.store))
    # At most this long (STORE_CONNECT_WAIT_S); the connect goes on if it takes longer.
    await asyncio.wait({connecting}, timeout=STORE_CONNECT_WAIT_S)
    provider = ServiceProvider(build_services(settings, storage), connecting=connecting)
    await _ask_store(storage.store)
    return provider


async def upgrade_in_background(store: ObjectStore) -> None:
    """Move the old layout home, once; logged, never raising (`orion migrate` runs it
    by hand, and every start runs it again)."""
    from app.learning.upgrade import upgrade
    from app.storage.breaker import StoreOffline

    try:
        report = await upgrade(store)
    except Exception as exc:
        # Offline: the store's breaker has said so, with its cause (store.unavailable).
        traceback = None if isinstance(exc, StoreOffline) else exc
        log.warning("memory.upgrade.failed", error=type(exc).__name__, exc_info=traceback)
        return
    if report.found:
        log.info(
            "memory.upgrade",
            deleted=report.deleted,
            unreadable=report.unreadable,
            **{f"moved_{kind}": n for kind, n in report.moved.items()},
        )


async def _mark_layout(store: ObjectStore, since: datetime, *, logged: bool = True) -> bool:
    """Within the start-up probe's bound; logged, never raising: False when not marked."""
    from app.learning.upgrade import mark_layout
    from app.storage.breaker import PROBE_TIMEOUT_S, StoreOffline
    from app.storage.deadline import storage_deadline

    try:
        with storage_deadline(PROBE_TIMEOUT_S):
            await mark_layout(store, since)
    except Exception as exc:
        traceback = None if isinstance(exc, StoreOffline) else exc
        if logged:
            log.warning("memory.layout_mark_failed", error=type(exc).__name__, exc_info=traceback)
        return False
    return True


async def _upgrade_once_marked(store: ObjectStore, since: datetime, marked: bool) -> None:
    """A start the store refused marks it once it answers, then moves the old layout home:
    the homes it kept meanwhile (the mark says since when) are never taken for the old's."""
    while not marked:
        await asyncio.sleep(MARK_RETRY_S)
        marked = await _mark_layout(store, since, logged=False)
    await upgrade_in_background(store)


async def _connect(store: ObjectStore) -> None:
    from app.storage.store import StoreUnreachable

    try:
        await store.connect()
    except StoreUnreachable:
        pass  # its breaker is open and has said so (store.unavailable), and probes on
    except Exception as exc:  # the first real operation will try again, and report it
        log.warning("services.store_connect_failed", exc_info=exc)


async def _ask_store(store: ObjectStore) -> None:
    """One cheap listing: if the store does not answer (or its bucket does not exist),
    its breaker opens now, before any person is affected, and readiness says so."""
    from app.storage.breaker import PROBE_KEY, PROBE_TIMEOUT_S, StoreOffline
    from app.storage.deadline import storage_deadline
    from app.storage.store import StoreUnreachable

    try:
        with storage_deadline(PROBE_TIMEOUT_S):
            async with asyncio.timeout(PROBE_TIMEOUT_S * 2):
                await store.list(PROBE_KEY)
    except (StoreUnreachable, StoreOffline):
        pass  # the breaker is open, has said so (store.unavailable), and probes on
    except Exception as exc:
        log.warning("storage.check_failed", exc_info=exc)


class ServiceProvider:
    """The built services, and the work they run in the background, for one process."""

    def __init__(
        self, services: Services, *, connecting: asyncio.Future[None] | None = None
    ) -> None:
        """`connecting`: the store's connect, if it may still be under way."""
        self.services = services
        self.settings = services.settings
        self.storage = services.storage
        self._background: list[asyncio.Future[None]] = [connecting] if connecting else []

    async def start(self) -> None:
        """Start the background work, on the loop that serves (once): moving what an
        earlier Orion wrote home (app/learning/upgrade.py), and the sweeps. Before that,
        and before anything is served, the store is marked as the new layout's."""
        storage = self.storage
        if storage.memory_store is not None:
            store, since = whole_store(storage, self.settings), datetime.now(UTC)
            marked = await _mark_layout(store, since)
            self._run("memory.upgrade", _upgrade_once_marked(store, since, marked))
        if not self.settings.gcs_memories_bucket:
            from app.memory.retention_sweep import keep_sweeping

            # A bucket's lifecycle rule deletes old conversations; a directory needs us (every
            # team's at once: their keys keep their kind's prefix).
            retention = session_retention(self.settings)
            store = storage.deployment_store or storage.store
            self._run("memory.retention.sweep", keep_sweeping(store, retention))
        if storage.deployment_store is not None:
            from app.memory.team_keys import keep_finishing_erasures

            # Uninstalls' second passes (app/memory/team_keys.py): the marks are in storage,
            # so whichever instance runs next finishes what another left.
            erasures = keep_finishing_erasures(storage.deployment_store)
            self._run("memory.team_erasure.finish", erasures)

    def _run(self, name: str, work: Coroutine[Any, Any, None]) -> None:
        # A context of its own: background work must not log as an event.
        task = asyncio.get_running_loop().create_task(work, name=name, context=Context())
        self._background.append(task)

    @contextlib.asynccontextmanager
    async def storage_within(self, budget_s: float | None = None) -> AsyncIterator[Storage]:
        """The store for work a person waits for: every storage call in the block ends within
        `budget_s` (None: the current deadline) or a shorter enclosing one; then TimeoutError."""
        from app.storage.deadline import storage_deadline, time_left

        with storage_deadline(budget_s) if budget_s is not None else contextlib.nullcontext():
            async with asyncio.timeout(time_left()):
                yield self.storage

    async def close(self) -> None:
        """Stop the background work and close the long-lived clients (at shutdown)."""
        for task in self._background:
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)
        await self.storage.store.close()
        await self.services.claude.close()
