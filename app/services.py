"""The composition root: builds the heavy, long-lived clients once, off the ack path.

Importing anthropic, google-cloud-storage and langfuse takes seconds on a small
machine, while Slack wants an acknowledgement within 3 s. The server therefore starts
with Bolt alone and calls `ServiceProvider.warm_up()` right away, which builds in the
background, in the order the person needs them:

1. `Storage` — the memory store and Orion's own records. A thread start needs nothing
   else (besides Slack), so a fresh instance greets from memory as soon as the store is
   connected, while the Claude client is still importing.
2. `Services` — tracing, the Claude client and the agent, for answering messages.

Listeners `await provider.storage()` or `await provider.get()` for what they use.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.config import Settings
from app.observability.logging import get_logger

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

    from app.agent.turn import Agent
    from app.storage.store import ObjectStore

log = get_logger(__name__)


@dataclass(frozen=True)
class Storage:
    """Everything a greeting needs from the store."""

    # Orion's own records (thread contexts, event claims) live in `store` always; memory
    # reads and writes go through `memory_store`, which is None when memory is switched off.
    store: ObjectStore
    memory_store: ObjectStore | None


@dataclass(frozen=True)
class Services:
    settings: Settings
    storage: Storage
    claude: AsyncAnthropic
    agent: Agent


ClaudeFactory = Callable[[Settings], "AsyncAnthropic"]


def build_storage(settings: Settings) -> Storage:
    """Cheap: the store connects (imports its client library) in `Store.connect()`."""
    from app.storage.factory import open_object_store

    store = open_object_store(settings.gcs_memories_bucket, settings.memory_dir)
    return Storage(store=store, memory_store=store if settings.memory_enabled else None)


def build_services(
    settings: Settings, storage: Storage, claude_factory: ClaudeFactory | None = None
) -> Services:
    """Import and construct tracing, the Claude client and the agent. Runs in a worker
    thread."""
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
            after_turn_budget_s=settings.memory_after_turn_timeout_s,
        ),
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
    """Hands out the Storage, then the Services, each built once in the background."""

    def __init__(
        self,
        settings: Settings,
        *,
        services: Services | None = None,
        claude_factory: ClaudeFactory | None = None,
        on_ready: Callable[[], None] | None = None,
    ) -> None:
        self.settings = settings
        self._services = services
        self._storage = services.storage if services is not None else None
        self._claude_factory = claude_factory
        self._on_ready = on_ready  # runs on the loop once the warm-up has built everything
        self._storage_task: asyncio.Future[Storage] | None = None
        self._task: asyncio.Future[Services] | None = None

    def warm_up(self) -> None:
        """Start building in the background; returns immediately. Idempotent."""
        if self._storage is None and self._storage_task is None:
            self._storage_task = asyncio.ensure_future(self._build_storage())
        if self._services is None and self._task is None:
            self._task = asyncio.ensure_future(self._build())
            self._task.add_done_callback(self._log_ready)

    async def _build_storage(self) -> Storage:
        storage = build_storage(self.settings)
        try:
            await storage.store.connect()
        except Exception as exc:  # the first real operation will retry and report it
            log.warning("services.store_connect_failed", error=type(exc).__name__, exc_info=exc)
        return storage

    async def _build(self) -> Services:
        # Storage first: the greeting needs it, and importing both at once would only
        # share the same CPU between them.
        storage = await self.storage()
        services = await asyncio.to_thread(
            build_services, self.settings, storage, self._claude_factory
        )
        if self._on_ready is not None:
            self._on_ready()
        return services

    async def storage(self) -> Storage:
        """The store, without waiting for the Claude client."""
        if self._storage is None:
            self.warm_up()
            assert self._storage_task is not None
            self._storage = await asyncio.shield(self._storage_task)
        return self._storage

    async def get(self) -> Services:
        """Everything, the Claude client included."""
        if self._services is None:
            self.warm_up()
            assert self._task is not None
            self._services = await asyncio.shield(self._task)
        return self._services

    async def close(self) -> None:
        """Close the long-lived clients (at shutdown), if they were ever built."""
        if self._storage is not None:
            await self._storage.store.close()
        if self._services is not None:
            await self._services.claude.close()

    @staticmethod
    def _log_ready(task: asyncio.Future[Services]) -> None:
        if task.cancelled():
            return
        if (error := task.exception()) is not None:
            log.error("services.failed", error=type(error).__name__, exc_info=error)
        else:
            log.info("services.ready")
