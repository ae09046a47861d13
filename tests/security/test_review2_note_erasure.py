"""An answer's note keeps its undo record while its person is being forgotten.

The erasure's listing came just before the record was written into the person's home,
so it could not find the record; then storage fails the guard's check of their profile
that would have seen the erasure. The note goes out without an Undo — and its record must
not stay behind, holding the old content of what the answer changed. Played on the GCS
emulator, with the failure made by the faulty proxy in front of it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.agent.memory_notes import NoteRequest, note_for_turn
from app.learning.erasure import forget_everything
from app.learning.guard import Guard
from app.memory.change_log import ChangeLog
from app.memory.homes import person
from app.storage.gcs import GcsObjectStore
from app.storage.store import ObjectStore, StoreLayer
from tests.backends import THREAD, USER
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.memory.tool.helpers import run
from tests.security.test_review2_undo_erasure import (
    MEMORIES,
    OLD_CONTENT,
    OWN,
    holding_the_person,
    memory_tool,
)

UNDO = f"{person(USER).prefix}undo/"


class ErasedBeforeTheRecord(StoreLayer):
    """The store, with the person forgotten just before the note's undo record is written
    (so the erasure's listing cannot see it), and storage then failing every read of their
    profile, the erasure's mark (GCS answering 503 until the test ends)."""

    def __init__(self, inner: ObjectStore, proxy: FaultyProxy) -> None:
        super().__init__(inner)
        self.proxy = proxy
        self.erased = False

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        if key.startswith(UNDO) and not self.erased:
            self.erased = True
            await forget_everything(self.inner, USER)
            self.proxy.add_rule(person(USER).profile_key, status=503, method="GET")
        return await super().write(key, content, if_generation=if_generation)


async def guard_of(store: ObjectStore) -> Guard:
    """The person's erasure guard, as their turn began (their profile read then)."""
    return await Guard.reading(store, person(USER))


async def address_changed(store: ObjectStore) -> tuple[datetime, ChangeLog]:
    """An answer (begun 5 s ago) that changed the person's address: when it began, and
    what it changed."""
    await store.write(f"{OWN}address.md", OLD_CONTENT)
    started = datetime.now(UTC) - timedelta(seconds=5)
    log = ChangeLog()
    tool = memory_tool(store, log)
    await run(
        tool,
        command="str_replace",
        path=f"{MEMORIES}/address.md",
        old_str="12 Rua Augusta",
        new_str="3 Rua do Ouro",
    )
    return started, log


async def test_a_notes_undo_record_kept_during_an_erasure_does_not_stay_behind(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    store = GcsObjectStore(gcs_bucket, retry_timeout=0.5, request_timeout=0.5)
    started, log = await address_changed(store)
    racing = ErasedBeforeTheRecord(store, gcs_proxy)
    request = NoteRequest(USER, THREAD, started, await guard_of(racing))

    note = await note_for_turn(request, log, shown_by_default=True, budget_s=5.0)

    assert racing.erased
    assert note is not None and note.undo_id is None, "the note goes out, without an Undo"
    gcs_proxy.clear_rules()
    assert holding_the_person(gcs_emulator, gcs_bucket) == [], (
        "no undo record holds the erased person's old address"
    )
    await store.close()


class ErasedOnceTheRecordIsKept(StoreLayer):
    """The store, with the person forgotten right after the note's undo record is written
    (their erasure finds it in their home and deletes it), and storage then failing every
    deletion of an undo record (GCS answering 503 until the test ends)."""

    def __init__(self, inner: ObjectStore, proxy: FaultyProxy) -> None:
        super().__init__(inner)
        self.proxy = proxy
        self.erased = False

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        generation = await super().write(key, content, if_generation=if_generation)
        if key.startswith(UNDO) and not self.erased:
            self.erased = True
            await forget_everything(self.inner, USER)
            self.proxy.add_rule("undo/", status=503, method="DELETE")
        return generation


async def test_a_person_forgotten_as_the_note_is_kept_gets_no_note_even_if_storage_fails(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    """The note would name what the answer saved about someone who asked to be forgotten
    meanwhile: none goes out, also when dropping its record then fails."""
    store = GcsObjectStore(gcs_bucket, retry_timeout=0.5, request_timeout=0.5)
    started, log = await address_changed(store)
    racing = ErasedOnceTheRecordIsKept(store, gcs_proxy)
    request = NoteRequest(USER, THREAD, started, await guard_of(racing))

    note = await note_for_turn(request, log, shown_by_default=True, budget_s=5.0)

    assert racing.erased
    assert note is None
    gcs_proxy.clear_rules()
    assert holding_the_person(gcs_emulator, gcs_bucket) == []
    await store.close()
