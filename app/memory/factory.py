"""Choose where memories live: the GCS bucket when one is configured, else a directory."""

from __future__ import annotations

from pathlib import Path

from app.memory.store import MemoryStore


def open_memory_store(bucket: str | None, directory: Path) -> MemoryStore:
    """The store for `GCS_MEMORIES_BUCKET`, or for `MEMORY_DIR` when no bucket is set.

    The bucket is reached over the network, so it sits behind a circuit breaker that
    skips it while it is down (app/memory/breaker.py); a local directory cannot be
    unreachable in that way. Cheap: neither backend touches the network or imports
    google-cloud-storage here.
    """
    if bucket:
        from app.memory.breaker import GuardedStore
        from app.memory.gcs_store import GcsMemoryStore

        return GuardedStore(GcsMemoryStore(bucket))
    from app.memory.local_store import LocalMemoryStore

    return LocalMemoryStore(directory)
