"""An uninstall's erasure in two passes (app/memory/team_keys.py): what the first pass
cannot reach — a write whose uninstall check failed, deletions cut short by storage — is
deleted by the second, once turns in flight are over, with the Langfuse traces processed
since; the pending mark in storage is what brings it, on whichever instance runs next; a
reinstall finishes it first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.memory.team_keys import (
    LATE_WRITES_S,
    finish_erasure_of,
    finish_erasures,
    pending_key,
    team_scoped,
    uninstall_tombstone_key,
)
from app.storage.store import ObjectStore, StoredObject, StoreLayer, StoreUnavailable
from app.storage.team_scope import Tenant, bound_tenant
from tests.backends import Backend, erase_team
from tests.fakes.langfuse_api import FakeLangfuse
from tests.span_log import SpanLog

TEAM_A = Tenant(None, "TAAAA1")
TEAM_B = Tenant(None, "TBBBB2")
NOTES = "people/U0SAME01/memory/notes.md"
A_NOTES = "people/teams/-/TAAAA1/U0SAME01/memory/notes.md"
B_NOTES = "people/teams/-/TBBBB2/U0SAME01/memory/notes.md"
LATER = timedelta(seconds=LATE_WRITES_S + 1)


class TombstoneUnreadable(StoreLayer):
    """Storage fails every read of an uninstall tombstone (and only that)."""

    async def read(self, key: str) -> StoredObject | None:
        if key.startswith("uninstalls/-/"):
            raise StoreUnavailable("storage failing just then")
        return await self.inner.read(key)


class DeletesFailAfter(StoreLayer):
    """Storage that fails every deletion after the first `allowed`."""

    def __init__(self, inner: ObjectStore, allowed: int) -> None:
        super().__init__(inner)
        self.allowed = allowed

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        if self.allowed <= 0:
            raise StoreUnavailable("storage down mid-erasure")
        self.allowed -= 1
        return await self.inner.delete(key, if_generation=if_generation)


async def write_as(store: ObjectStore, tenant: Tenant, key: str, text: str) -> None:
    with bound_tenant(tenant):
        await store.write(key, text)


async def test_a_write_whose_uninstall_check_failed_goes_in_the_second_pass(
    backend: Backend,
) -> None:
    store = team_scoped(TombstoneUnreadable(backend.store))
    uninstalled = datetime.now(UTC)
    with bound_tenant(TEAM_A):
        await erase_team(backend.store, TEAM_A, now=uninstalled)
        with pytest.raises(StoreUnavailable):
            await store.write(NOTES, "written back by a turn in flight")
    await write_as(team_scoped(backend.store), TEAM_B, NOTES, "another workspace")
    assert A_NOTES in backend.raw_names(), "the first pass could not see it"

    too_soon = await finish_erasures(backend.store, now=uninstalled + timedelta(minutes=1))
    assert too_soon == [] and A_NOTES in backend.raw_names(), "turns may still be running"

    [finished] = await finish_erasures(backend.store, now=uninstalled + LATER)

    assert (finished.tenant, finished.deleted) == (TEAM_A, 1)
    assert sorted(backend.raw_names()) == sorted([uninstall_tombstone_key(TEAM_A), B_NOTES])
    assert await finish_erasures(backend.store, now=uninstalled + LATER) == [], "done once"


async def test_an_erasure_cut_short_by_storage_is_finished_by_the_next_pass(
    backend: Backend,
) -> None:
    store = team_scoped(backend.store)
    keys = [f"people/U0SAME01/memory/note-{n}.md" for n in range(6)]
    for key in keys:
        await write_as(store, TEAM_A, key, "A's")
    uninstalled = datetime.now(UTC)

    with pytest.raises(StoreUnavailable):
        await erase_team(DeletesFailAfter(backend.store, allowed=2), TEAM_A, now=uninstalled)
    assert len([n for n in backend.raw_names() if n.startswith("people/")]) == 4
    # Still down at the first round (logged): the mark stays for the next one.
    still_down = DeletesFailAfter(backend.store, allowed=0)
    assert await finish_erasures(still_down, now=uninstalled + LATER) == []
    assert pending_key(TEAM_A) in backend.raw_names()

    [finished] = await finish_erasures(backend.store, now=uninstalled + LATER)

    assert finished.deleted == 4
    assert backend.raw_names() == [uninstall_tombstone_key(TEAM_A)]


async def test_a_reinstall_finishes_the_erasure_and_keeps_what_it_writes_after(
    backend: Backend,
) -> None:
    store = team_scoped(TombstoneUnreadable(backend.store))
    uninstalled = datetime.now(UTC) - timedelta(seconds=5)
    with bound_tenant(TEAM_A):
        await erase_team(backend.store, TEAM_A, now=uninstalled)
        with pytest.raises(StoreUnavailable):
            await store.write(NOTES, "left by the old installation")

    finished = await finish_erasure_of(backend.store, TEAM_A)
    await write_as(team_scoped(backend.store), TEAM_A, NOTES, "the new installation's")
    later = await finish_erasures(backend.store, now=uninstalled + LATER)

    assert finished is not None and finished.deleted == 1
    assert later == [] and await finish_erasure_of(backend.store, TEAM_A) is None
    assert backend.raw_read(A_NOTES) == "the new installation's"
    assert pending_key(TEAM_A) not in backend.raw_names()


@pytest.mark.parametrize("ids", ["-/tbbbb2", "-/TBBBB2/users", "TBBBB2"])
async def test_a_mark_that_names_no_workspace_is_left_alone(backend: Backend, ids: str) -> None:
    await backend.store.write(f"uninstalls/pending/{ids}", "{}")
    await write_as(team_scoped(backend.store), TEAM_B, NOTES, "B's")

    assert await finish_erasures(backend.store, now=datetime.now(UTC) + LATER) == []
    assert B_NOTES in backend.raw_names()


class DeletesFailFor(StoreLayer):
    """Storage that can never delete one workspace's objects (a retention hold, say)."""

    def __init__(self, inner: ObjectStore, segment: str) -> None:
        super().__init__(inner)
        self.segment = segment

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        if self.segment in key and not key.startswith("uninstalls/"):
            raise StoreUnavailable("this one cannot be deleted")
        return await self.inner.delete(key, if_generation=if_generation)


async def test_a_workspace_whose_objects_cannot_be_deleted_holds_up_no_other(
    backend: Backend,
) -> None:
    uninstalled = datetime.now(UTC)
    for tenant in (TEAM_A, TEAM_B):
        await erase_team(backend.store, tenant, now=uninstalled)
        # A late write each, that the first pass could not see.
        await backend.store.write(
            f"people/teams/-/{tenant.team_id}/U0SAME01/memory/notes.md", "late"
        )
    stuck = DeletesFailFor(backend.store, "/TAAAA1/")

    [finished] = await finish_erasures(stuck, now=uninstalled + LATER)

    assert finished.tenant == TEAM_B
    assert B_NOTES not in backend.raw_names() and A_NOTES in backend.raw_names()
    assert pending_key(TEAM_A) in backend.raw_names(), "tried again next round"


async def test_an_unreadable_mark_is_finished_from_when_it_was_written(backend: Backend) -> None:
    await erase_team(backend.store, TEAM_A)
    await backend.store.write(pending_key(TEAM_A), "not a time")
    await backend.store.write(A_NOTES, "late")

    assert await finish_erasures(backend.store) == [], "written just now"
    [finished] = await finish_erasures(backend.store, now=datetime.now(UTC) + LATER)

    assert finished.deleted == 1 and A_NOTES not in backend.raw_names()


async def test_the_second_pass_deletes_the_traces_langfuse_processed_after_the_first(
    backend: Backend, spans: SpanLog, fake_langfuse: FakeLangfuse
) -> None:
    """Langfuse lists a trace only once it has processed it: the uninstall's own try
    misses the last moments' traces; the second pass, 15 minutes on, finds them."""
    uninstalled = datetime.now(UTC)
    await erase_team(backend.store, TEAM_A, now=uninstalled)
    # Processed by Langfuse after the first pass: one of A's, one of B's.
    fake_langfuse.record_observation("o-a", "trace-a", "U0SAME01", metadata={"team_id": "TAAAA1"})
    fake_langfuse.record_observation("o-b", "trace-b", "U0SAME01", metadata={"team_id": "TBBBB2"})

    [finished] = await finish_erasures(backend.store, now=uninstalled + LATER)

    assert finished.tenant == TEAM_A
    assert fake_langfuse.traces() == {"trace-b": "U0SAME01"}, "only workspace A's go"
