"""Handle each Slack event once, even when Slack retries it on another instance.

Slack retries an event not acknowledged within 3 s, up to three times, and a retry can
reach any Cloud Run instance. Bolt acks first and runs the listener after, so the claim
happens in the listener, off the ack path: the first delivery to create
`events/{event_id}` in the shared store (create-only, GCS `if_generation_match=0`) wins;
every other delivery is acked and dropped. A small in-process cache answers repeats on
the same instance without a round trip.

If the claim store is unreachable, Orion prefers answering (at worst twice) over
dropping the person's message, and says so in the log. Claims are tiny; a bucket
lifecycle rule deletes `events/` objects after a day (see README).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from collections import OrderedDict
from typing import Any

from app.memory.paths import event_claim_key
from app.memory.store import CREATE_ONLY, PreconditionFailed
from app.observability.logging import get_logger
from app.services import ServiceProvider

log = get_logger(__name__)

RECENT_EVENTS_KEPT = 10_000
# Answering beats waiting: if the store can't confirm a claim this fast, go ahead.
CLAIM_BUDGET_S = 2.0
_INSTANCE = f"{socket.gethostname()}:{os.getpid()}"


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
        try:
            store = (await self._provider.get()).store
            claim = json.dumps({"instance": _INSTANCE, "claimed_at": time.time()})
            async with asyncio.timeout(CLAIM_BUDGET_S):
                await store.write(event_claim_key(event_id), claim, if_generation=CREATE_ONLY)
        except PreconditionFailed:
            log.info("slack.event.duplicate", source="claim")
            return True
        except Exception as exc:
            log.warning("slack.event.claim_unavailable", error=type(exc).__name__)
        return False

    def _remember(self, event_id: str) -> None:
        self._recent[event_id] = None
        while len(self._recent) > RECENT_EVENTS_KEPT:
            self._recent.popitem(last=False)
