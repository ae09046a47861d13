"""GCS answering a write with something that is not an object resource.

A 200 whose body is not what GCS sends for a stored object (a proxy's page, an empty
body, an error document) says nothing about what was stored. The store must treat it as
GCS failing — a `StoreError` every caller handles — never let a `KeyError` or
`TypeError` out of a memory command, a save or a claim.
"""

from __future__ import annotations

import pytest

from app.storage.gcs import GcsObjectStore
from app.storage.store import CREATE_ONLY, StoreUnavailable
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator

KEY = "people/U0123ABCD/memory/notes.md"
UPLOAD = "uploadType=multipart"


async def test_a_write_answered_200_without_a_generation_is_a_store_failure(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    # The proxy answers the upload itself: 200, with a JSON body naming no generation.
    gcs_proxy.add_rule(UPLOAD, status=200, method="POST")
    store = GcsObjectStore(gcs_bucket, retry_timeout=0.5, request_timeout=0.5)

    with pytest.raises(StoreUnavailable):
        await store.write(KEY, "blind")
    with pytest.raises(StoreUnavailable):
        await store.write(KEY, "conditional", if_generation=CREATE_ONLY)

    assert gcs_emulator.read(gcs_bucket, KEY) is None  # nothing was stored
    await store.close()
