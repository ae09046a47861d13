"""What bench/storage_requests.py counts: each request Orion's GCS store sends, as the
recording proxy in front of the emulator saw it, named by kind and object."""

from __future__ import annotations

from app.storage.gcs import GcsObjectStore
from app.storage.store import CREATE_ONLY
from bench.storage_requests import Names, bucket_of, storage_request, touched_twice
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator

USER, THREAD = "U0COUNTED", "1712345678.000100"
# Written the way a layout may write a thread ts: its dot as a dash.
KEY = f"people/{USER}/conversations/1712345678-000100.json"


async def test_every_request_is_named_by_kind_and_object_in_the_order_sent(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    store = GcsObjectStore(gcs_bucket)
    generation = await store.write(KEY, "{}", if_generation=CREATE_ONLY)
    await store.write(KEY, '{"turns": 1}', if_generation=generation)
    await store.write(KEY, '{"turns": 2}')
    assert (await store.read(KEY)) is not None
    assert (await store.read(KEY)) is not None
    assert [o.key for o in await store.list(f"people/{USER}/")] == [KEY]
    assert await store.delete(KEY)
    await store.close()

    names = Names()
    names.add(USER, "user")
    names.add(THREAD, "thread")
    counted = [storage_request(p) for p in gcs_proxy.requests if bucket_of(p) == gcs_bucket]
    assert [(r.kind, names.readable(r.name)) for r in counted] == [
        ("cond. write (new)", "people/{user}/conversations/{thread}.json"),
        ("cond. write", "people/{user}/conversations/{thread}.json"),
        ("write", "people/{user}/conversations/{thread}.json"),
        ("read", "people/{user}/conversations/{thread}.json"),
        ("read", "people/{user}/conversations/{thread}.json"),
        ("list", "people/{user}/*"),
        ("delete", "people/{user}/conversations/{thread}.json"),
    ]
    assert touched_twice(counted) == [KEY]  # written three times (a delete too), read twice
    assert gcs_emulator.read(gcs_bucket, KEY) is None


async def test_an_object_read_once_and_written_once_is_not_touched_twice(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    gcs_emulator.write(gcs_bucket, "users/U1/preferences.json", "{}")
    store = GcsObjectStore(gcs_bucket)

    stored = await store.read("users/U1/preferences.json")
    assert stored is not None
    # Content that names something else: the name comes from the upload's metadata.
    await store.write(
        "users/U1/preferences.json", '{"name": "Sam"}', if_generation=stored.generation
    )
    await store.read("global/context.md")
    await store.close()

    counted = [storage_request(p) for p in gcs_proxy.requests if bucket_of(p) == gcs_bucket]
    assert [(r.kind, r.name) for r in counted] == [
        ("read", "users/U1/preferences.json"),
        ("cond. write", "users/U1/preferences.json"),
        ("read", "global/context.md"),
    ]
    assert touched_twice(counted) == []
