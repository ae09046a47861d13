"""The `ObjectStore` contract, run against the local directory and the GCS emulator."""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest

from app.storage.store import (
    CREATE_ONLY,
    UNCHANGED,
    ObjectStore,
    PreconditionFailed,
    StoredObject,
    StoreLayer,
    read_if_changed,
    update,
)
from tests.backends import Backend

KEY = "users/U0123ABCD/notes.md"


async def test_read_of_a_missing_key_is_none(store: ObjectStore) -> None:
    assert await store.read(KEY) is None


async def test_write_then_read_round_trips_text_generation_and_size(backend: Backend) -> None:
    content = "Prefers *short* answers — in français ✓\n"
    generation = await backend.store.write(KEY, content)

    stored = await backend.store.read(KEY)

    assert stored is not None
    assert (stored.key, stored.content, stored.generation) == (KEY, content, generation)
    assert stored.size == len(content.encode())
    assert isinstance(stored.updated, datetime) and stored.updated.tzinfo is not None
    assert generation > 0
    assert backend.raw_read(KEY) == content


async def test_every_write_gets_a_new_generation(store: ObjectStore) -> None:
    first = await store.write(KEY, "one")
    second = await store.write(KEY, "two")
    third = await store.write(KEY, "three", if_generation=second)

    assert len({first, second, third}) == 3
    stored = await store.read(KEY)
    assert stored is not None and (stored.content, stored.generation) == ("three", third)


async def test_create_only_write_fails_when_the_key_exists(store: ObjectStore) -> None:
    await store.write(KEY, "original", if_generation=CREATE_ONLY)

    with pytest.raises(PreconditionFailed):
        await store.write(KEY, "clobber", if_generation=CREATE_ONLY)

    stored = await store.read(KEY)
    assert stored is not None and stored.content == "original"


async def test_write_over_a_stale_generation_is_refused(store: ObjectStore) -> None:
    stale = await store.write(KEY, "v1")
    await store.write(KEY, "v2", if_generation=stale)

    with pytest.raises(PreconditionFailed):
        await store.write(KEY, "lost update", if_generation=stale)

    stored = await store.read(KEY)
    assert stored is not None and stored.content == "v2"


async def test_conditional_write_to_a_missing_key_is_refused(store: ObjectStore) -> None:
    with pytest.raises(PreconditionFailed):
        await store.write(KEY, "x", if_generation=12345)
    assert await store.read(KEY) is None


async def test_delete_reports_whether_the_object_existed(backend: Backend) -> None:
    await backend.store.write(KEY, "bye")

    assert await backend.store.delete(KEY) is True
    assert await backend.store.delete(KEY) is False
    assert await backend.store.read(KEY) is None
    assert backend.raw_names() == []


# Local only: fake-gcs-server ignores preconditions on DELETE (real GCS enforces them), which
# tests/storage/test_delete_preconditions.py pins so the day it changes is noticed.
@pytest.mark.parametrize("backend", ["local"], indirect=True)
async def test_conditional_delete_refuses_a_stale_generation(backend: Backend) -> None:
    stale = await backend.store.write(KEY, "v1")
    current = await backend.store.write(KEY, "v2")

    with pytest.raises(PreconditionFailed):
        await backend.store.delete(KEY, if_generation=stale)
    assert await backend.store.delete(KEY, if_generation=current) is True


async def test_list_returns_objects_under_a_string_prefix_in_key_order(store: ObjectStore) -> None:
    for key in [
        "users/U1AAA/b.md",
        "users/U1AAA/a/deep.md",
        "users/U1AAAB/other.md",
        "global/context.md",
    ]:
        await store.write(key, key)

    listed = await store.list("users/U1AAA/")

    assert [info.key for info in listed] == ["users/U1AAA/a/deep.md", "users/U1AAA/b.md"]
    assert [info.size for info in listed] == [len("users/U1AAA/a/deep.md"), len("users/U1AAA/b.md")]
    assert all(info.generation > 0 and info.updated.tzinfo is not None for info in listed)
    assert [info.key for info in await store.list("users/U1AAA")] == [
        "users/U1AAA/a/deep.md",
        "users/U1AAA/b.md",
        "users/U1AAAB/other.md",
    ]
    assert await store.list("sessions/") == []
    assert len(await store.list("")) == 4


async def test_update_creates_edits_and_deletes(store: ObjectStore) -> None:
    assert await update(store, KEY, lambda old: None) is None  # absent stays absent
    assert (await update(store, KEY, lambda old: (old or "") + "a\n")).content == "a\n"
    assert (await update(store, KEY, lambda old: (old or "") + "b\n")).content == "a\nb\n"
    assert await update(store, KEY, lambda old: None) is None
    assert await store.read(KEY) is None


async def test_update_aborts_when_transform_raises(store: ObjectStore) -> None:
    await store.write(KEY, "keep")

    def refuse(old: str | None) -> str:
        raise LookupError("not here")

    with pytest.raises(LookupError):
        await update(store, KEY, refuse)
    stored = await store.read(KEY)
    assert stored is not None and stored.content == "keep"


async def test_update_from_an_earlier_read_skips_reading_and_survives_a_stale_one(
    store: ObjectStore,
) -> None:
    await store.write(KEY, "a\n")
    fresh = await store.read(KEY)
    appended = await update(store, KEY, lambda old: f"{old}b\n", already_read=fresh)
    assert appended.content == "a\nb\n"
    # `fresh` is stale now: the conditional write is refused and the update re-reads.
    stale = await update(store, KEY, lambda old: f"{old}c\n", already_read=fresh)
    assert stale.content == "a\nb\nc\n"
    created = await update(store, "users/U1AAA/new.md", lambda old: "x", already_read=None)
    assert created.content == "x"


async def test_update_does_not_take_a_stale_read_for_nothing_to_do(store: ObjectStore) -> None:
    await store.write(KEY, "a")
    earlier = await store.read(KEY)
    await store.write(KEY, "b")  # someone else, after our read

    def mark_unless_seen(old: str | None) -> str | None:
        return old if old == "a" else f"{old}+"

    assert (await update(store, KEY, mark_unless_seen, already_read=earlier)).content == "b+"


async def test_concurrent_updates_lose_nothing(backend: Backend) -> None:
    writers = 50

    async def append(n: int) -> None:
        # Many more attempts than the default: all 50 writers collide on every round.
        await update(backend.store, KEY, lambda old: f"{old or ''}line {n}\n", attempts=writers * 2)

    await asyncio.gather(*(append(n) for n in range(writers)))

    content = backend.raw_read(KEY)
    assert content is not None
    assert sorted(content.splitlines()) == sorted(f"line {n}" for n in range(writers))


class HidesNotes(StoreLayer):
    """A layer that changes what reads answer (as retention or a workspace's scope do)."""

    async def read(self, key: str) -> StoredObject | None:
        return None if key.endswith("notes.md") else await self.inner.read(key)


async def test_a_conditional_read_answers_unchanged_or_the_object_as_read_would(
    store: ObjectStore,
) -> None:
    generation = await store.write(KEY, "one")
    assert await read_if_changed(store, KEY, generation) is UNCHANGED
    newer = await store.write(KEY, "two")
    stored = await read_if_changed(store, KEY, generation)
    assert isinstance(stored, StoredObject) and (stored.content, stored.generation) == (
        "two",
        newer,
    )
    # Through a layer that changes reads and does not say how to pass a conditional one
    # on: its own read answers, never the store beneath it.
    assert await read_if_changed(HidesNotes(store), KEY, newer) is None
    await store.delete(KEY)
    assert await read_if_changed(store, KEY, newer) is None
