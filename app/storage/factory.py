"""Choose where objects live: the GCS bucket when one is configured, else a directory."""

from __future__ import annotations

from pathlib import Path

from app.storage.store import ObjectStore


def open_object_store(bucket: str | None, directory: Path) -> ObjectStore:
    """The store for `GCS_MEMORIES_BUCKET`, or for `MEMORY_DIR` when no bucket is set.

    The bucket is reached over the network, so it sits behind a circuit breaker that
    skips it while it is down (app/storage/breaker.py); a local directory cannot be
    unreachable in that way. Cheap: neither backend touches the network or imports
    google-cloud-storage here.
    """
    if bucket:
        from app.storage.breaker import GuardedStore
        from app.storage.gcs import GcsObjectStore

        return GuardedStore(GcsObjectStore(bucket))
    from app.storage.local_directory import LocalDirectoryStore

    return LocalDirectoryStore(directory)
