"""Each Slack event handled once, across instances: the first delivery to create
`events/{event_id}` wins (docs/architecture.md, "How an event flows", the claim). With the claim
store unreachable Orion answers, at worst twice, rather than drop the message."""

from __future__ import annotations

import json
import os
import re
import socket
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from app.memory.key_prefixes import EVENTS
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.storage.breaker import StoreOffline
from app.storage.store import CREATE_ONLY, PreconditionFailed

if TYPE_CHECKING:
    from slack_bolt.request.async_request import AsyncBoltRequest

log = get_logger(__name__)

_EVENT_ID = re.compile(r"[A-Za-z0-9]{4,64}")


def event_claim_key(event_id: str) -> str:
    if not isinstance(event_id, str) or not _EVENT_ID.fullmatch(event_id):
        raise ValueError(f"not a Slack event id: {event_id!r}")
    return f"{EVENTS.prefix}{event_id}"


RECENT_EVENTS_KEPT = 10_000
# Answering beats waiting: if the store can't confirm a claim this fast, go ahead. A
# caller's shorter storage deadline applies.
CLAIM_BUDGET_S = 2.0
_INSTANCE = f"{socket.gethostname()}:{os.getpid()}"


def is_retried_delivery(request: AsyncBoltRequest) -> bool:
    """Slack's own mark on a redelivery (HTTP header; Socket Mode's `retry_attempt`, which
    Bolt's adapter turns into the same header)."""
    values = request.headers.get("x-slack-retry-num") or ["0"]
    return values[0] not in ("", "0")


class EventDeduplicator:
    def __init__(self, provider: ServiceProvider) -> None:
        self._provider = provider
        self._recent: OrderedDict[str, None] = OrderedDict()

    def seen_here(self, body: dict[str, Any]) -> bool:
        """A cheap first check (this instance only), for work that must start at once."""
        if body.get("event_id") in self._recent:
            log.info("slack.event.duplicate", source="memory")
            return True
        return False

    async def is_duplicate(self, body: dict[str, Any]) -> bool:
        """True when this event was already claimed by this or another instance."""
        event_id = body.get("event_id")
        if not isinstance(event_id, str):
            return False  # not an Events API delivery (nothing to retry)
        if self.seen_here(body):
            return True
        self._remember(event_id)
        return await self._claimed_before(event_id)

    async def first_time(self, claim_id: str) -> bool:
        """True the first time any instance asks for `claim_id` (e.g. once per person and
        day); also True when the store cannot tell (at worst, twice)."""
        if claim_id in self._recent:
            return False
        self._remember(claim_id)
        return not await self._claimed_before(claim_id)

    async def _claimed_before(self, claim_id: str) -> bool:
        try:
            async with self._provider.storage_within(CLAIM_BUDGET_S) as storage:
                claim = json.dumps({"instance": _INSTANCE, "claimed_at": time.time()})
                key = event_claim_key(claim_id)
                await storage.store.write(key, claim, if_generation=CREATE_ONLY)
        except PreconditionFailed:
            log.info("slack.event.duplicate", source="claim")
            return True
        except StoreOffline:
            log.debug("slack.event.claim_skipped", reason="store unavailable")
        except Exception as exc:
            log.warning("slack.event.claim_unavailable", exc_info=exc)
        return False

    def _remember(self, event_id: str) -> None:
        self._recent[event_id] = None
        while len(self._recent) > RECENT_EVENTS_KEPT:
            self._recent.popitem(last=False)
