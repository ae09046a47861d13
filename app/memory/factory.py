"""Choose where memories live: the GCS bucket when one is configured, else a directory."""

from __future__ import annotations

from pathlib import Path

from app.memory.store import MemoryStore


def open_memory_store(bucket: str | None, directory: Path) -> MemoryStore:
    """The store for `GCS_MEMORIES_BUCKET`, or for `MEMORY_DIR` when no bucket is set.

    Cheap: neither backend touches the network or imports google-cloud-storage here.
    """
    if bucket:
        from app.memory.gcs_store import GcsMemoryStore

        return GcsMemoryStore(bucket)
    from app.memory.local_store import LocalMemoryStore

    return LocalMemoryStore(directory)
