"""Attacker's review of the search indexes a process keeps in memory
(app/learning/search_index.py, `searchable_index`): kept by workspace and key, and
served only while storage says the object is still at the kept generation. An index kept
for one workspace, organisation, owner or earlier life of a person must never answer a
search for another; what it keeps is bounded by what it holds, not by its text alone."""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.learning import search_index
from app.learning.search_index import document_for, searchable_index, with_documents
from app.memory.homes import Home, channel, person
from app.memory.team_keys import team_scoped
from app.storage.local_directory import LocalDirectoryStore
from app.storage.store import ObjectStore, StoredObject, StoreLayer
from app.storage.team_scope import Tenant, bound_tenant
from tests.backends import USER, Backend

NOW = datetime.now(UTC).replace(microsecond=0)
BEFORE, AFTER = "1712000001.000001", "1712000002.000002"


class OneGeneration(StoreLayer):
    """Every object reads as generation 1: a kept index would be served for any object
    that shares its key in the cache, whatever it holds."""

    async def read(self, key: str) -> StoredObject | None:
        stored = await self.inner.read(key)
        if stored is None:
            return None
        return StoredObject(stored.key, stored.content, 1, stored.updated, stored.size)


def an_index(thread: str, title: str) -> str:
    return with_documents(None, [document_for(thread, title, "Lisbon.", [], NOW)])


async def titles(store: ObjectStore, home: Home) -> list[str]:
    index = await searchable_index(store, home, cutoff=None)
    return [] if index is None else list(index.titles)


# One person id in an organisation, its workspace, the same workspace id with no
# organisation, and the same workspace id in another organisation: four tenants.
GRID = (
    Tenant("E0ORGA1", "T0TEAM1"),
    Tenant("E0ORGA1", None),
    Tenant(None, "T0TEAM1"),
    Tenant("E0ORGB2", "T0TEAM1"),
)


async def test_an_organisations_workspaces_never_get_each_others_kept_index(
    backend: Backend,
) -> None:
    store = team_scoped(OneGeneration(backend.store))
    home = person(USER)
    for n, tenant in enumerate(GRID):
        with bound_tenant(tenant):
            await store.write(home.search_key, an_index(BEFORE, f"Plan {n} of {tenant.label}"))
    for _ in range(2):  # the second round is answered from what the first kept
        for n, tenant in enumerate(GRID):
            with bound_tenant(tenant):
                assert await titles(store, home) == [f"Plan {n} of {tenant.label}"]


async def test_a_channels_kept_index_never_answers_for_a_person_nor_the_reverse(
    backend: Backend,
) -> None:
    store = OneGeneration(backend.store)
    mine, theirs = person(USER), channel("C0123ABCD")
    await store.write(mine.search_key, an_index(BEFORE, "My salary review"))
    await store.write(theirs.search_key, an_index(AFTER, "The channel's offsite"))
    for _ in range(2):
        assert await titles(store, mine) == ["My salary review"]
        assert await titles(store, theirs) == ["The channel's offsite"]


@pytest.mark.parametrize("tenant", [None, Tenant(None, "T0TEAM1")], ids=["single", "distribution"])
async def test_a_person_forgotten_elsewhere_and_back_is_searched_in_their_new_index_only(
    backend: Backend, tenant: Tenant | None
) -> None:
    """This instance kept the person's index; another instance (a Forget everything, or
    an uninstall, then a new conversation) deleted it and wrote a new one. Nothing of the
    old one is found here, though nothing here was told."""
    store = team_scoped(backend.store) if tenant else backend.store
    home = person(USER)
    with bound_tenant(tenant) if tenant else contextlib.nullcontext():
        await store.write(home.search_key, an_index(BEFORE, "Salary review in Lisbon"))
        assert await titles(store, home) == ["Salary review in Lisbon"]  # kept here now

        await store.delete(home.search_key)  # another instance's erasure
        await store.write(home.search_key, an_index(AFTER, "Offsite in Lisbon"))

        assert await titles(store, home) == ["Offsite in Lisbon"]


async def test_a_local_index_replaced_on_disk_is_read_anew(tmp_path: Path) -> None:
    """Development: the file replaced behind the store's back (restored from a backup, an
    edit) has a new modification time, which is its generation."""
    store = LocalDirectoryStore(tmp_path)
    home = person(USER)
    await store.write(home.search_key, an_index(BEFORE, "Salary review in Lisbon"))
    assert await titles(store, home) == ["Salary review in Lisbon"]

    replacement = tmp_path / "replacement.json"
    replacement.write_text(an_index(AFTER, "Offsite in Lisbon"))
    os.replace(replacement, tmp_path / home.search_key)

    assert await titles(store, home) == ["Offsite in Lisbon"]


async def test_many_people_with_a_short_history_each_keep_a_bounded_number_of_indexes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process meets many people, each with one short conversation: each kept index
    costs its object and columns (some 2 KB) besides its few hundred characters, and the
    bound counts them, so fewer indexes than the bound's characters would allow are kept."""
    bound = 100_000
    monkeypatch.setattr(search_index, "PARSED_KEPT_BYTES", bound)
    monkeypatch.setattr(search_index, "_parsed_kept", type(search_index._parsed_kept)())
    store = LocalDirectoryStore(tmp_path)
    people = [person(f"U0{n:06d}") for n in range(100)]
    for home in people:
        await store.write(home.search_key, an_index(BEFORE, f"Offsite of {home.id}"))
        assert await titles(store, home) == [f"Offsite of {home.id}"]

    kept = search_index._parsed_kept
    assert len(an_index(BEFORE, f"Offsite of {people[0].id}")) * len(people) < bound // 2
    assert len(kept) <= bound // 2_000
    assert ("", people[-1].search_key) in kept, "the newest is kept"
