"""The store as Orion keeps memories in it: no secret is ever written
(secret_free_store.py), and no conversation older than the retention window is read back
(retention.py). One composition, used by app/services.py and by the tests."""

from __future__ import annotations

from app.memory.retention import ExpiringSessionsStore, SessionRetention
from app.memory.secret_free_store import SecretFreeStore
from app.storage.store import ObjectStore


def kept(store: ObjectStore, retention: SessionRetention) -> ObjectStore:
    return SecretFreeStore(ExpiringSessionsStore(store, retention))
