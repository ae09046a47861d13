"""What a memory load says of each object it was asked for: found, missing, failed or timed
out (what the benchmark and the logs count as a turn without memory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.memory.homes import person, preferences_key
from app.memory.loader import Scope, load_memories
from app.storage.local_directory import LocalDirectoryStore
from app.storage.store import DeadlineReached, StoredObject, StoreUnavailable

USER = "U0LOADER1"
PROFILE = person(USER).profile_key
PREFERENCES = preferences_key(USER)


class _Store(LocalDirectoryStore):
    """A directory whose profile read ends as the store's reads end when `failure` happens
    to them (a GCS read its deadline cut short ends so, as GCS is fine)."""

    def __init__(self, root: Path, failure: Exception) -> None:
        super().__init__(root)
        self.failure = failure

    async def read(self, key: str) -> StoredObject | None:
        if key == PROFILE:
            raise self.failure
        return await super().read(key)


@pytest.mark.parametrize(
    ("failure", "timed_out", "failed"),
    [
        (DeadlineReached("GCS read: cut short by the deadline"), ["profile"], []),
        (StoreUnavailable("GCS read: 404 on a listing"), [], ["profile"]),
    ],
    ids=["cut_short", "failed"],
)
async def test_a_read_its_deadline_cut_short_counts_as_timed_out_not_failed(
    tmp_path: Path, failure: Exception, timed_out: list[str], failed: list[str]
) -> None:
    store = _Store(tmp_path, failure)
    await store.write(PREFERENCES, '{"name": "Lou"}')

    loaded = await load_memories(
        store, {Scope.USER: PREFERENCES, Scope.PROFILE: PROFILE}, budget_s=2.0
    )

    assert [s.value for s in loaded.timed_out] == timed_out
    assert [s.value for s in loaded.failed] == failed
    assert loaded.found == (Scope.USER,)
