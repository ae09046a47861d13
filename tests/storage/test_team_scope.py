"""Distribution mode's per-workspace keys (app/storage/team_scope.py), on both backends:
the same key in two workspaces is two objects, nothing is reached without a workspace
bound, and a workspace uninstalled during an event gets nothing written back."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from app.memory.team_keys import pending_key, team_scoped, uninstall_tombstone_key
from app.storage.store import ObjectStore, StoredObject, StoreLayer
from app.storage.team_scope import (
    InvalidTenant,
    Tenant,
    TenantNotBound,
    TenantUninstalled,
    bound_tenant,
    tombstone,
)
from tests.backends import Backend, erase_team

TEAM_A = Tenant(None, "TAAAA1")
TEAM_B = Tenant(None, "TBBBB2")
ORG_WIDE = Tenant("EORG001", None)
IN_ORG = Tenant("EORG001", "TCCCC3")
NOTES = "people/U0SAME01/memory/notes.md"


async def test_the_same_key_in_two_workspaces_is_two_objects(backend: Backend) -> None:
    store = team_scoped(backend.store)
    for tenant, text in ((TEAM_A, "A's note"), (TEAM_B, "B's note")):
        with bound_tenant(tenant):
            await store.write(NOTES, text)

    with bound_tenant(TEAM_A):
        a = await store.read(NOTES)
        listed = await store.list("people/U0SAME01/")
    with bound_tenant(TEAM_B):
        b = await store.read(NOTES)

    assert a is not None and a.content == "A's note" and a.key == NOTES
    assert b is not None and b.content == "B's note"
    assert [obj.key for obj in listed] == [NOTES], "a listing names keys as they were written"
    assert backend.raw_names() == [
        "people/teams/-/TAAAA1/U0SAME01/memory/notes.md",
        "people/teams/-/TBBBB2/U0SAME01/memory/notes.md",
    ]


async def test_an_organisation_wide_install_and_a_workspace_of_it_are_apart(
    backend: Backend,
) -> None:
    store = team_scoped(backend.store)
    with bound_tenant(ORG_WIDE):
        await store.write(NOTES, "org")
    with bound_tenant(IN_ORG):
        assert await store.read(NOTES) is None
        await store.write(NOTES, "workspace")
    assert backend.raw_names() == [
        "people/teams/EORG001/-/U0SAME01/memory/notes.md",
        "people/teams/EORG001/TCCCC3/U0SAME01/memory/notes.md",
    ]


async def test_nothing_is_reached_without_a_workspace_bound(backend: Backend) -> None:
    store = team_scoped(backend.store)
    with bound_tenant(TEAM_A):
        await store.write(NOTES, "A's note")
    for operation in (
        store.read(NOTES),
        store.write(NOTES, "unscoped"),
        store.delete(NOTES),
        store.list("people/"),
    ):
        with pytest.raises(TenantNotBound):
            await operation
    assert backend.raw_names() == ["people/teams/-/TAAAA1/U0SAME01/memory/notes.md"]


async def test_deployment_records_are_never_a_workspaces(backend: Backend) -> None:
    store = team_scoped(backend.store)
    await backend.store.write("installations/-/TAAAA1/bot.json", '{"bot_token": "xoxb-1"}')
    with bound_tenant(TEAM_A):
        for key in ("installations/-/TAAAA1/bot.json", "oauth-states/x", "uninstalls/-/TAAAA1"):
            with pytest.raises(ValueError):
                await store.read(key)
        with pytest.raises(ValueError):
            await store.list("installations/")


@pytest.mark.parametrize(
    "team_id",
    ["../TAAAA1", "TAAAA1/../TBBBB2", "T", "taaaa1", "T1.2", "T1%2F", "TAAAA1\n", "UAAAA1"],
)
def test_an_id_that_is_not_slacks_shape_names_no_workspace(team_id: str) -> None:
    with pytest.raises(InvalidTenant):
        Tenant(None, team_id)
    with pytest.raises(InvalidTenant):
        Tenant("../E1", "TAAAA1")


async def test_a_write_of_an_event_that_began_before_the_uninstall_is_taken_back(
    backend: Backend,
) -> None:
    store = team_scoped(backend.store)
    with bound_tenant(TEAM_A):
        await store.write("people/U0SAME01/memory/kept.md", "before")
        # The workspace uninstalls while this event runs (on another instance, say).
        await erase_team(backend.store, TEAM_A)
        with pytest.raises(TenantUninstalled):
            await store.write(NOTES, "written back by a turn in flight")
    with bound_tenant(TEAM_B):
        await store.write(NOTES, "another workspace goes on")

    assert sorted(backend.raw_names()) == sorted(
        [
            uninstall_tombstone_key(TEAM_A),
            pending_key(TEAM_A),
            "people/teams/-/TBBBB2/U0SAME01/memory/notes.md",
        ]
    )


async def test_an_event_after_a_reinstall_writes_again(backend: Backend) -> None:
    store = team_scoped(backend.store)
    earlier = datetime.now(UTC) - timedelta(minutes=5)
    await backend.store.write(uninstall_tombstone_key(TEAM_A), tombstone(earlier))
    with bound_tenant(TEAM_A):
        await store.write(NOTES, "after the reinstall")
        stored = await store.read(NOTES)
    assert stored is not None and stored.content == "after the reinstall"


async def test_erasing_a_workspace_leaves_every_other_one_untouched(backend: Backend) -> None:
    store = team_scoped(backend.store)
    keys = (
        NOTES,
        "people/U0SAME01/profile.json",
        "people/U0SAME01/conversations/1712345678-123456.json",
        "channels/C0SAME01/memory/decisions.md",
        "workspace/channels.json",
        "events/claims/Ev1",
        "global/context.md",
        # Written by Orion before its owners' homes, not moved yet: erased as well.
        "users/U0SAME01/preferences.json",
        "sessions/1712345678-123456/context.md",
        "erasures/abc",
    )
    for tenant in (TEAM_A, TEAM_B, ORG_WIDE):
        with bound_tenant(tenant):
            await asyncio.gather(*(store.write(key, tenant.label) for key in keys))
    others = {name: backend.raw_read(name) for name in backend.raw_names() if "TAAAA1" not in name}

    erased = await erase_team(backend.store, TEAM_A)

    assert erased.deleted == len(keys)
    left = {name: backend.raw_read(name) for name in backend.raw_names()}
    marks = (uninstall_tombstone_key(TEAM_A), pending_key(TEAM_A))
    assert left == others | {key: left[key] for key in marks}


class HeldTombstoneCheck(StoreLayer):
    """Holds every read of an uninstall tombstone until `release` is set."""

    def __init__(self, inner: ObjectStore) -> None:
        super().__init__(inner)
        self.checking = asyncio.Event()
        self.release = asyncio.Event()

    async def read(self, key: str) -> StoredObject | None:
        if key.startswith("uninstalls/"):
            self.checking.set()
            await self.release.wait()
        return await self.inner.read(key)


async def test_a_writer_that_stops_waiting_between_its_write_and_its_check_still_takes_it_back(
    backend: Backend,
) -> None:
    """A turn's storage deadline (or a Stop) can cancel a write just after it landed, while
    its uninstall check is under way: the check still runs, and the write goes."""
    held = HeldTombstoneCheck(backend.store)
    store = team_scoped(held)
    with bound_tenant(TEAM_A):
        await erase_team(backend.store, TEAM_A)  # the uninstall, while this event runs
        writing = asyncio.ensure_future(store.write(NOTES, "written back by a turn in flight"))
        await held.checking.wait()
        assert "people/teams/-/TAAAA1/U0SAME01/memory/notes.md" in backend.raw_names()
        writing.cancel()  # the caller's deadline
        with pytest.raises(asyncio.CancelledError):
            await writing
        held.release.set()
        for _ in range(200):
            if len(backend.raw_names()) == 2:
                break
            await asyncio.sleep(0.01)

    assert backend.raw_names() == [uninstall_tombstone_key(TEAM_A), pending_key(TEAM_A)]
