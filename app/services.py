"""The composition root: builds the heavy, long-lived clients once, off the ack path.

Importing anthropic, google-cloud-storage and langfuse takes seconds on a small
machine, while Slack wants an acknowledgement within 3 s. The server therefore starts
with Bolt alone and calls `ServiceProvider.warm_up()` right away, which builds in the
background, in the order the person needs them:

1. `Storage` — the memory store and Orion's own records. A thread start needs nothing
   else (besides Slack), so a fresh instance greets from memory as soon as the store is
   connected, while the Claude client is still importing. A connect that hangs (no
   credentials server answering) holds up neither: past a short wait the store is handed
   out, each operation bounded by its own storage deadline, and the Claude client loads.
2. `Services` — tracing, the Claude client and the agent, for answering messages.

With a local memory directory, a background task also deletes conversations older than
the retention window, at start-up and then daily (in a bucket, its lifecycle rule does).

Listeners `await provider.storage()` or `await provider.get()` for what they use; storage
work a person waits for runs in `async with provider.storage_within(budget_s)`.

Each build is retried with back-off until it succeeds (app/runtime/retrying_build.py): one
transient failure at start must not leave the instance answering nothing until it is
restarted. Readiness (`GET /readyz`, app/readiness.py) reports how far the builds are.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.config import Settings, StorageSettings
from app.observability.logging import get_logger
from app.runtime.retrying_build import DEFAULT_BACKOFF, Backoff, BuildStatus, RetryingBuild
from app.runtime.worker_siblings import WorkerSiblings

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


ClaudeFactory = Callable[[Settings], "AsyncAnthropic"]

# How long the storage build waits for the store to connect (import its library, build
# its client) before handing the store out all the same. Waiting lets the store's import
# finish before the Claude client's starts (both at once would only share the CPU); but
# a connect can hang — in production the client looks its credentials up, and a metadata
# server that does not answer costs several attempts of seconds each — and the Claude
# client, so every answer, must not wait for that. The connect goes on in the background;
# each store operation waits for it within its own storage deadline.
STORE_CONNECT_WAIT_S = 2.0


def build_storage(settings: StorageSettings) -> Storage:
    """Cheap: the store connects (imports its client library) in `Store.connect()`.

    Whatever writes to the store, and whatever reads from it, does so through the rules of
    what Orion may keep, layered once beneath everything (and beneath the breaker): no
    secret is ever written (app/memory/secret_free_store.py), and conversations older
    than the retention window read as gone (app/memory/retention.py). In distribution
    mode every key is the bound team's (app/storage/team_scope.py), beneath those rules.
    """
    from app.memory.keeping import kept
    from app.memory.shared_context import SharedContextCache
    from app.memory.team_keys import team_scoped
    from app.storage.factory import open_object_store

    retention = session_retention(settings)
    backends: list[ObjectStore] = []

    def layers(backend: ObjectStore) -> ObjectStore:
        backends.append(backend)
        return kept(team_scoped(backend) if settings.keys_per_team else backend, retention)

    store = open_object_store(settings.gcs_memories_bucket, settings.memory_dir, layers=layers)
    deployment_store = backends[0] if settings.keys_per_team else None
    if not settings.memory_enabled:
        return Storage(store=store, memory_store=None, deployment_store=deployment_store)
    # Above the breaker: while storage is down, a context read moments ago still serves.
    shared = SharedContextCache(store, max_age_s=settings.memory_global_context_max_age_s)
    return Storage(store=store, memory_store=shared, deployment_store=deployment_store)


def session_retention(settings: StorageSettings) -> SessionRetention:
    from app.memory.retention import SessionRetention

    return SessionRetention(days=settings.memory_session_retention_days)


def build_services(
    settings: Settings, storage: Storage, claude_factory: ClaudeFactory | None = None
) -> Services:
    """Import and construct tracing, the Claude client and the agent. Runs in a worker
    thread."""
    from app.agent.thinking import Thinking
    from app.agent.turn import Agent, MemorySettings
    from app.observability import tracing

    if settings.tracing_enabled:
        tracing.configure_tracing(
            public_key=_plain(settings.langfuse_public_key),
            secret_key=_plain(settings.langfuse_secret_key),
            base_url=settings.langfuse_base_url,
        )
    claude = (claude_factory or build_claude_client)(settings)
    agent = Agent(
        claude=claude,
        model=settings.anthropic_model,
        store=storage.memory_store,
        memory=MemorySettings(
            load_budget_s=settings.memory_load_timeout_s,
            token_budget=settings.memory_context_token_budget,
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
        # Orion records its own generation per Claude call (app/agent/loop.py); the SDK's
        # OpenTelemetry spans would land beside them in Langfuse's provider, duplicated,
        # and cost about 0.6 ms of CPU per call.
        open_telemetry=False,
        # The SDK's aiohttp transport: a turn's two Claude calls cost about 2.5 ms less CPU
        # than over httpcore, and aiohttp's pool keeps a burst's connections alive without
        # httpcore's scan of every idle connection on each request.
        http_client=DefaultAioHttpClient(limits=httpx2.Limits(max_connections=200)),
    )


def _plain(secret: object) -> str | None:
    return secret.get_secret_value() if secret is not None else None  # type: ignore[attr-defined]


class ServiceProvider:
    """Hands out the Storage, then the Services, each built in the background and retried
    with back-off until it is built (app/runtime/retrying_build.py): a failure at start heals
    without a restart. Between attempts, `storage()` and `get()` raise `NotBuilt` at once,
    so a listener apologises instead of waiting out the back-off in silence."""

    def __init__(
        self,
        settings: Settings,
        *,
        services: Services | None = None,
        claude_factory: ClaudeFactory | None = None,
        on_ready: Callable[[], None] | None = None,
        backoff: Backoff = DEFAULT_BACKOFF,
        worker_siblings: WorkerSiblings | None = None,
    ) -> None:
        self.settings = settings
        # The other worker processes of this instance (HTTP_WORKERS > 1), which a Stop
        # may have to reach; None when the process serves alone.
        self.worker_siblings = worker_siblings or WorkerSiblings.from_environment()
        self._claude_factory = claude_factory
        self._on_ready = on_ready  # runs on the loop once the warm-up has built everything
        self._storage_check: asyncio.Task[None] | None = None
        self._connecting: asyncio.Future[None] | None = None
        self._sweeping: asyncio.Task[None] | None = None
        self._finishing_erasures: asyncio.Task[None] | None = None
        self._storage: RetryingBuild[Storage]
        self._services: RetryingBuild[Services]
        if services is not None:
            # Built by the caller (tests, benchmarks): nothing to build, and nothing
            # checked at start either; the breaker alone tells the store's state.
            self._storage = RetryingBuild.already("storage", services.storage)
            self._services = RetryingBuild.already("services", services)
            self.storage_checked = True
        else:
            self._storage = RetryingBuild(
                "storage", self._build_storage, backoff=backoff, on_built=self._check_storage
            )
            self._services = RetryingBuild(
                "services", self._build_services, backoff=backoff, on_built=self._built
            )
            # True once the store has been asked one thing since it was built (or failed
            # to answer, which opens its breaker): until then its health is unknown.
            self.storage_checked = False

    def warm_up(self) -> None:
        """Start building in the background; returns immediately. Idempotent."""
        self._storage.start()
        self._services.start()
        if not self.settings.gcs_memories_bucket and self._sweeping is None:
            # A bucket deletes old conversations by its lifecycle rule; a directory needs us.
            # A context of its own: the sweeps must not log as the event that started us.
            self._sweeping = asyncio.get_running_loop().create_task(
                self._sweep_local_store(),
                name="memory.retention.sweep",
                context=contextvars.Context(),
            )
        if self.settings.keys_per_team and self._finishing_erasures is None:
            # Uninstalls' second passes (app/memory/team_keys.py): the marks are in storage,
            # so whichever instance runs next finishes what another left.
            self._finishing_erasures = asyncio.get_running_loop().create_task(
                self._finish_team_erasures(),
                name="memory.team_erasure.finish",
                context=contextvars.Context(),
            )

    async def _finish_team_erasures(self) -> None:
        from app.memory.team_keys import keep_finishing_erasures

        storage = await self._storage.wait_built()
        assert storage.deployment_store is not None  # distribution mode builds one
        if self.settings.tracing_enabled:
            # A second pass deletes the workspace's traces too, and tracing is set up with
            # the services: before, it would find tracing off and skip them for good.
            await self._services.wait_built()
        await keep_finishing_erasures(storage.deployment_store)

    async def _sweep_local_store(self) -> None:
        from app.memory.retention_sweep import keep_sweeping

        storage = await self._storage.wait_built()
        # Every team's conversations at once, in distribution mode (their keys keep
        # their kind's prefix: app/storage/team_scope.py).
        await keep_sweeping(
            storage.deployment_store or storage.store, session_retention(self.settings)
        )

    async def _build_storage(self) -> Storage:
        storage = build_storage(self.settings)
        self._connecting = asyncio.ensure_future(self._connect(storage.store))
        # At most this long: see STORE_CONNECT_WAIT_S. Not cancelled when it is over.
        await asyncio.wait({self._connecting}, timeout=STORE_CONNECT_WAIT_S)
        return storage

    async def _connect(self, store: ObjectStore) -> None:
        from app.storage.store import StoreUnreachable

        try:
            await store.connect()
        except StoreUnreachable:
            pass  # its breaker is open and has said so (store.unavailable), and probes on
        except Exception as exc:  # the first real operation will retry and report it
            log.warning("services.store_connect_failed", error=type(exc).__name__, exc_info=exc)

    def _check_storage(self, storage: Storage) -> None:
        """Ask the store one cheap thing, beside the first events: if it does not answer,
        its breaker opens now, and readiness says so before any person is affected."""
        self._storage_check = asyncio.ensure_future(self._ask_store(storage.store))

    async def _ask_store(self, store: ObjectStore) -> None:
        from app.storage.breaker import PROBE_KEY, PROBE_TIMEOUT_S, StoreOffline
        from app.storage.deadline import storage_deadline
        from app.storage.store import StoreUnreachable

        if self._connecting is not None:
            # Nobody waits for this: the connect may take its time, and if it fails for
            # want of a network, the breaker is open already.
            await self._connecting
        try:
            with storage_deadline(PROBE_TIMEOUT_S):
                async with asyncio.timeout(PROBE_TIMEOUT_S * 2):
                    await store.read(PROBE_KEY)
        except (StoreUnreachable, StoreOffline):
            pass  # the breaker is open, has said so (store.unavailable), and probes on
        except Exception as exc:
            log.warning("storage.check_failed", error=type(exc).__name__, exc_info=exc)
        self.storage_checked = True

    async def _build_services(self) -> Services:
        # Storage first: the greeting needs it, and importing both at once would only
        # share the same CPU between them (its build waits for its connect only so long:
        # STORE_CONNECT_WAIT_S). A storage build that fails is retried on its own; this
        # waits for it rather than failing alongside it.
        storage = await self._storage.wait_built()
        return await asyncio.to_thread(build_services, self.settings, storage, self._claude_factory)

    def _built(self, _: Services) -> None:
        if self._on_ready is not None:
            self._on_ready()

    async def storage(self) -> Storage:
        """The store, without waiting for the Claude client. `NotBuilt` between attempts."""
        return await self._storage.get()

    @contextlib.asynccontextmanager
    async def storage_within(self, budget_s: float | None = None) -> AsyncIterator[Storage]:
        """The store for work a person waits for: getting it (a fresh instance may still be
        connecting) and every storage call made in the block end within `budget_s` — or
        within the current storage deadline when None; a shorter enclosing deadline always
        applies. Past it, TimeoutError; between build attempts, `NotBuilt` at once."""
        from app.storage.deadline import storage_deadline, time_left

        with storage_deadline(budget_s) if budget_s is not None else contextlib.nullcontext():
            async with asyncio.timeout(time_left()):
                yield await self.storage()

    async def get(self) -> Services:
        """Everything, the Claude client included. `NotBuilt` between attempts (of either)."""
        if (services := self._services.value) is not None:
            return services
        await self._storage.get()  # fails at once while the store's build is retrying
        return await self._services.get()

    @property
    def storage_status(self) -> BuildStatus:
        return self._storage.status()

    @property
    def services_status(self) -> BuildStatus:
        return self._services.status()

    @property
    def built_storage(self) -> Storage | None:
        return self._storage.value

    @property
    def built_services(self) -> Services | None:
        return self._services.value

    async def close(self) -> None:
        """Stop building, and close the long-lived clients (at shutdown) that were built."""
        await self._services.close()
        await self._storage.close()
        running = (self._connecting, self._storage_check, self._sweeping, self._finishing_erasures)
        for task in running:
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if (storage := self._storage.value) is not None:
            await storage.store.close()
        if (services := self._services.value) is not None:
            await services.claude.close()
