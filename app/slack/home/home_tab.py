"""The Home tab, shared by its listeners (controls.py): read what Orion keeps about a person and
publish it to their tab, acting only on whoever opened or clicked (never a button's value)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.memory_inventory import MemoryInventory, take_inventory
from app.observability import tracing
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.conversation.thread_links import WorkspaceLinks
from app.slack.home.memory_view import (
    MAX_CONVERSATIONS,
    MEMORY_OFF,
    UNAVAILABLE,
    ThreadLinks,
    home_view,
    message_view,
)
from app.storage.store import ObjectStore
from app.storage.team_scope import current_tenant

log = get_logger(__name__)


class MemoryOff(Exception):
    """Memory is switched off: there is nothing to show, forget or export."""


class HomeTab:
    def __init__(self, provider: ServiceProvider) -> None:
        self.provider = provider
        # By workspace: in distribution mode each has its own URL (None: the one workspace).
        self._links = WorkspaceLinks()

    @asynccontextmanager
    async def store(self, budget_s: float | None = None) -> AsyncIterator[ObjectStore]:
        """The memory store, with every call inside bounded by `budget_s` (by default the
        tab's: more than a greeting's, as it reads every note, still short: the person is
        looking at the tab); raises MemoryOff when memory is switched off."""
        budget_s = budget_s or self.provider.settings.memory_load_timeout_s * 2
        async with self.provider.storage_within(budget_s) as storage:
            if storage.memory_store is None:
                raise MemoryOff
            yield storage.memory_store

    async def publish(
        self,
        client: AsyncWebClient,
        user: str,
        *,
        notice: str | None = None,
        inventory: MemoryInventory | None = None,
    ) -> None:
        """Show `user` what Orion keeps about them (`inventory` when already read)."""
        links = await self.links(client)
        try:
            total = None
            if inventory is None:
                with tracing.observe("memory.show", input={"via": "home"}) as span:
                    async with self.store() as store:
                        inventory = await take_inventory(
                            store, user, conversations=MAX_CONVERSATIONS
                        )
                    span.update(output=inventory.counts())
                log.info("memory.show", via="home", **inventory.counts())
                total = inventory.conversations_total
            chosen = inventory.memory_notes
            notes = self.provider.settings.memory_notes if chosen is None else chosen
            view = home_view(
                user, inventory, links, conversations_total=total, notice=notice, memory_notes=notes
            )
        except MemoryOff:
            view = message_view(MEMORY_OFF, notice=notice)
        except Exception as exc:
            log.warning("memory.show.failed", via="home", exc_info=exc)
            view = message_view(UNAVAILABLE, notice=notice)
        try:
            await client.views_publish(user_id=user, view=view)
        except SlackApiError as exc:
            log.warning("slack.home.publish_failed", error=exc.response.get("error"))

    async def links(self, client: AsyncWebClient) -> ThreadLinks:
        """How to link to a thread: the workspace's URL, asked once per workspace
        (auth.test, with that workspace's token)."""
        tenant = current_tenant()
        return await self._links.get(client, tenant.label if tenant else None)


def clicking_user(body: dict[str, Any]) -> str:
    """Who clicked: Slack's own field of the payload, the only id a listener acts on."""
    return str((body.get("user") or {}).get("id") or "")
