"""Choose where objects live: the GCS bucket when one is configured, else a directory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.storage.store import ObjectStore

Layers = Callable[[ObjectStore], ObjectStore]


def open_object_store(
    bucket: str | None,
    directory: Path,
    *,
    layers: Layers | None = None,
    expires: Callable[[str], bool] | None = None,
) -> ObjectStore:
    """The store for `GCS_MEMORIES_BUCKET`, or for `MEMORY_DIR` when no bucket is set.

    The bucket is reached over the network, so it sits behind a circuit breaker that
    skips it while it is down (app/storage/breaker.py); a local directory cannot be
    unreachable in that way. `layers` wraps the backend itself, beneath the breaker: what
    it adds (the composition root's rules about what may be kept) holds for every
    operation, and the breaker still sees the backend's own failures. `expires`: the
    keys a bucket's lifecycle rule deletes (a directory is swept instead:
    app/memory/retention_sweep.py). Cheap: neither backend touches the network or imports
    google-cloud-storage here.
    """
    wrap = layers or (lambda backend: backend)
    if bucket:
        from app.storage.breaker import GuardedStore
        from app.storage.gcs import GcsObjectStore

        return GuardedStore(wrap(GcsObjectStore(bucket, expires=expires)))
    from app.storage.local_directory import LocalDirectoryStore

    return wrap(LocalDirectoryStore(directory))
