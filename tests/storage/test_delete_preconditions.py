"""Deletes conditional on a generation: what `update` relies on when it deletes an object,
and what the memory tool's rename relies on (tests/memory/tool/test_rename_race.py).

fake-gcs-server ignores `ifGenerationMatch` on DELETE (real GCS answers 412), so against
the emulator a test of these would pass whether or not the precondition was sent, or held.
They run on the local directory store, which enforces it as GCS does; each one loses data,
and fails, on a store that ignores the precondition. The last test pins the emulator's gap:
it fails once the emulator enforces the precondition, and then these can run on both
backends (as `test_conditional_delete_refuses_a_stale_generation` in
test_store_contract.py can).
"""

from __future__ import annotations

from pathlib import Path

from app.storage.gcs import GcsObjectStore
from app.storage.local_directory import LocalDirectoryStore
from app.storage.store import ObjectStore, StoreLayer, update

KEY = "users/U0123ABCD/preferences.json"


class ChangedBeforeDelete(StoreLayer):
    """A store on which someone else rewrites `key` just before a conditional delete of it
    arrives: the race a delete precondition is for, made certain (`times` times)."""

    def __init__(self, inner: ObjectStore, key: str, content: str, *, times: int = 1) -> None:
        super().__init__(inner)
        self.key, self.content, self.remaining = key, content, times

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        if key == self.key and if_generation is not None and self.remaining > 0:
            self.remaining -= 1
            await self.inner.write(key, self.content)  # someone else, first
        return await self.inner.delete(key, if_generation=if_generation)


async def test_an_update_that_deletes_keeps_a_change_made_since_its_read(tmp_path: Path) -> None:
    store = LocalDirectoryStore(tmp_path)
    await store.write(KEY, "stale")
    racing = ChangedBeforeDelete(store, KEY, "written meanwhile")

    def forget_the_stale_one(old: str | None) -> str | None:
        return None if old == "stale" else old

    # The delete over the generation that was read is refused; the retry reads the new
    # content, and the transform keeps it.
    assert (await update(racing, KEY, forget_the_stale_one)).content == "written meanwhile"
    assert racing.remaining == 0, "the race happened"
    stored = await store.read(KEY)
    assert stored is not None and stored.content == "written meanwhile"


async def test_an_update_that_deletes_what_it_read_deletes_it(tmp_path: Path) -> None:
    store = LocalDirectoryStore(tmp_path)
    await store.write(KEY, "stale")

    assert await update(store, KEY, lambda old: None) is None
    assert await store.read(KEY) is None


async def test_the_gcs_emulator_ignores_a_delete_precondition(gcs_bucket: str) -> None:
    """The emulator's gap, pinned (real GCS refuses this delete with 412)."""
    store = GcsObjectStore(gcs_bucket)
    try:
        stale = await store.write(KEY, "v1")
        await store.write(KEY, "v2")
        # On GCS: PreconditionFailed. If this starts failing, the emulator enforces the
        # precondition: run the tests above and their rename twin on both backends.
        assert await store.delete(KEY, if_generation=stale) is True
        assert await store.read(KEY) is None
    finally:
        await store.close()
