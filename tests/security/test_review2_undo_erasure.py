"""An Undo and an erasure at once, with storage failing: nothing of the person comes back.

The person clicks Undo; on another instance (or from their Home tab) they are forgotten
right after the undo claimed its record; then storage fails one of the undo's writes.
Whatever the undo had already put back, and its record (each file's old content), must
not outlive the erasure: the undo's writes pass the person's erasure guard, which takes
them back, and the person is told there is nothing left to undo. Played on the GCS
emulator, with the failure made by the faulty proxy in front of it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from app.learning.erasure import forget_everything
from app.learning.undo import UndoOutcome, save_undo_record, undo_changes
from app.memory.change_log import ChangeLog, RecordingStore
from app.memory.homes import person
from app.memory.scopes import MemoryScope
from app.memory.tool.model_paths import ModelPathStore
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.storage.gcs import GcsObjectStore
from app.storage.store import ObjectStore, StoreLayer
from tests.backends import THREAD, USER
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.memory.tool.helpers import run

OWN = person(USER).memory_prefix
MEMORIES = f"/memories/users/{USER}"
OLD_ADDRESS = "12 Rua Augusta"
OLD_CONTENT = f"my old address: {OLD_ADDRESS}\n"


class ErasedOnceClaimed(StoreLayer):
    """The store, with the person forgotten right after the undo claims its record, and
    storage then refusing to delete `failing` (GCS answering 503 until the test ends)."""

    def __init__(self, inner: ObjectStore, record_key: str, proxy: FaultyProxy, failing: str):
        super().__init__(inner)
        self.record_key, self.proxy, self.failing = record_key, proxy, failing
        self.erased = False

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        generation = await super().write(key, content, if_generation=if_generation)
        if key == self.record_key and not self.erased:
            self.erased = True
            await forget_everything(self.inner, USER)
            self.proxy.add_rule(self.failing, status=503, method="DELETE")
        return generation


def holding_the_person(emulator: GcsEmulator, bucket: str) -> list[str]:
    """Every object naming the person or holding their old address, but the mark their
    erasure leaves (their profile, holding only when it was)."""
    found = []
    for name in emulator.names(bucket):
        content = (emulator.read(bucket, name) or b"").decode()
        if name == person(USER).profile_key and set(json.loads(content)) <= {
            "version",
            "erased_at",
        }:
            continue
        if USER in name or USER in content or OLD_ADDRESS in content:
            found.append(name)
    return found


def memory_tool(store: ObjectStore, log: ChangeLog) -> ScopedMemoryTool:
    """The memory tool of a turn in the person's DM, its changes recorded in `log` (as
    app/agent/toolbox.py builds it)."""
    scope = MemoryScope(USER, THREAD)
    return ScopedMemoryTool(ModelPathStore(RecordingStore(store, log), scope), scope)


async def test_an_undo_cut_short_by_storage_during_an_erasure_brings_nothing_back(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    store = GcsObjectStore(gcs_bucket, retry_timeout=0.5, request_timeout=0.5)
    await store.write(f"{OWN}address.md", OLD_CONTENT)
    # The answer: a new note, and the old address deleted.
    log = ChangeLog()
    tool = memory_tool(store, log)
    await run(tool, command="create", path=f"{MEMORIES}/new.md", file_text="new\n")
    await run(tool, command="delete", path=f"{MEMORIES}/address.md")
    started = datetime.now(UTC) - timedelta(seconds=5)
    undo_id = await save_undo_record(store, USER, log.changes(), ["…"], created_at=started)
    assert undo_id is not None
    record_key = person(USER).undo_key(undo_id)
    racing = ErasedOnceClaimed(store, record_key, gcs_proxy, f"{OWN}new.md")

    result = await undo_changes(racing, undo_id, USER)

    assert racing.erased
    assert result.outcome is UndoOutcome.ERASED
    gcs_proxy.clear_rules()
    assert holding_the_person(gcs_emulator, gcs_bucket) == [], (
        "neither the address the undo put back nor its record outlives the erasure"
    )
    await store.close()
