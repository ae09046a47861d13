"""Delete expired conversations from a local directory in the background (a bucket's lifecycle
rule does it in GCS), each only if still the version listed, yielding the loop after each."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from datetime import timedelta

from app.memory.key_prefixes import CHANNELS, KEY_PREFIXES, PEOPLE, Lifetime
from app.memory.retention import SessionRetention
from app.observability.logging import get_logger, since
from app.storage.store import ObjectStore, PreconditionFailed

log = get_logger(__name__)

SWEEP_INTERVAL_S = 24 * 60 * 60


# Orion's short-lived records (event claims, install states): the bucket's lifecycle rule
# deletes them after a day; in a directory, the sweep does.
DAY_PREFIXES = tuple(kind.prefix for kind in KEY_PREFIXES if kind.lifetime is Lifetime.DAY)


async def sweep_expired(store: ObjectStore, retention: SessionRetention) -> Counter[str]:
    """Delete every expired conversation object, and every day-long record older than a
    day; how many went, by prefix."""
    cutoff = retention.cutoff()
    day_ago = retention.clock() - timedelta(days=1)
    deleted: Counter[str] = Counter()
    # The owners' homes hold the conversations (homes.py says which of their keys expire).
    for prefix in (PEOPLE.prefix, CHANNELS.prefix, *DAY_PREFIXES):
        for obj in await store.list(prefix):
            if prefix in DAY_PREFIXES:
                if obj.updated >= day_ago:
                    continue
            elif not retention.expired(obj.key, obj.updated, cutoff=cutoff):
                continue
            try:
                if await store.delete(obj.key, if_generation=obj.generation):
                    deleted[prefix] += 1
            except PreconditionFailed:
                pass  # written again since the listing: no longer expired
            await asyncio.sleep(0)
    return deleted


async def keep_sweeping(
    store: ObjectStore, retention: SessionRetention, *, interval_s: float = SWEEP_INTERVAL_S
) -> None:
    """Sweep now, then every `interval_s`, until cancelled (at shutdown)."""
    while True:
        await sweep_and_log(store, retention)
        await asyncio.sleep(interval_s)


async def sweep_and_log(store: ObjectStore, retention: SessionRetention) -> None:
    """One sweep, logged; a failure is a warning, and the next sweep tries again."""
    started = time.perf_counter()
    try:
        deleted = await sweep_expired(store, retention)
    except Exception as exc:
        log.warning("memory.retention.sweep_failed", exc_info=exc)
        return
    log.info(
        "memory.retention.sweep",
        retention_days=retention.days,
        deleted=sum(deleted.values()),
        **{f"deleted_{prefix.rstrip('/')}": count for prefix, count in deleted.items()},
        **since(started),
    )
