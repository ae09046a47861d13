"""What a turn changed, recorded as the store confirmed it, and undone exactly — on both
backends (a local directory and the GCS emulator), through the memory tool itself.

The end-to-end tests (tests/e2e/test_memory_notes.py) show the person's side; here each
command's record and each undo's edge: a failed write recorded as nothing, a file changed
since the turn, two undos at once.
"""

from __future__ import annotations

import asyncio
import json
import string
from datetime import UTC, datetime, timedelta

import pytest

from app.agent.memory_notes import NoteRequest, note_for_turn
from app.learning.erasure import forget_conversation, forget_everything, forget_note
from app.learning.guard import Guard
from app.learning.undo import UndoOutcome, save_undo_record, undo_changes
from app.memory import secret_free_store
from app.memory.change_log import ChangeLog, RecordingStore
from app.memory.homes import person
from app.memory.retention import SessionRetention
from app.memory.scopes import MemoryScope
from app.memory.tool.model_paths import ModelPathStore
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.observability.redaction import redact_secret_shapes
from app.observability.secret_shapes import SECRET_SHAPES
from app.storage.store import ObjectStore
from tests.backends import THREAD, USER, Backend
from tests.layout import conversation, profile
from tests.memory.tool.helpers import refused, run

HOME = person(USER)
OWN = HOME.memory_prefix  # where /memories/users/{USER}/ lives
MEMORIES = f"/memories/users/{USER}"
SESSION = f"/memories/sessions/{THREAD.replace('.', '-')}"
STARTED = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)


def _tool(store: ObjectStore, log: ChangeLog) -> ScopedMemoryTool:
    """The memory tool as a turn has it (app/agent/toolbox.py): each change recorded, in
    the store's keys, beneath the map from the model's paths."""
    scope = MemoryScope(USER, THREAD)
    return ScopedMemoryTool(ModelPathStore(RecordingStore(store, log), scope), scope)


def _own(backend: Backend) -> dict[str, str | None]:
    return {key: backend.raw_read(key) for key in backend.raw_names() if key.startswith(OWN)}


async def _seed(store: ObjectStore) -> None:
    await store.write(f"{OWN}keep.md", "kept\n")
    await store.write(f"{OWN}edit.md", "one\ntwo\n")
    await store.write(f"{OWN}gone.md", "to delete\n")
    await store.write(f"{OWN}move.md", "to move\n")


async def _turn(tool: ScopedMemoryTool) -> None:
    await run(tool, command="create", path=f"{MEMORIES}/new.md", file_text="new\n")
    await run(tool, command="str_replace", path=f"{MEMORIES}/edit.md", old_str="one", new_str="1")
    await run(tool, command="insert", path=f"{MEMORIES}/edit.md", insert_line=0, insert_text="0")
    await run(tool, command="delete", path=f"{MEMORIES}/gone.md")
    await run(
        tool, command="rename", old_path=f"{MEMORIES}/move.md", new_path=f"{MEMORIES}/moved.md"
    )


async def _turn_kept_for_undo(store: ObjectStore) -> str:
    """`_turn`, recorded, and its undo record kept; the record's id."""
    log = ChangeLog()
    await _turn(_tool(store, log))
    undo_id = await save_undo_record(store, USER, log.changes(), ["…"], created_at=STARTED)
    assert undo_id is not None
    return undo_id


async def test_each_command_is_recorded_with_what_it_replaced(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed(store)
    log = ChangeLog()
    await _turn(_tool(store, log))

    changes = {change.key: change for change in log.changes()}
    assert sorted(changes) == [
        f"{OWN}{name}.md" for name in ("edit", "gone", "move", "moved", "new")
    ]
    assert changes[f"{OWN}new.md"].created and changes[f"{OWN}moved.md"].created
    assert changes[f"{OWN}edit.md"].before == "one\ntwo\n"
    assert changes[f"{OWN}gone.md"].before == "to delete\n" and changes[f"{OWN}gone.md"].deleted
    assert changes[f"{OWN}move.md"].before == "to move\n" and changes[f"{OWN}move.md"].deleted
    current = await store.read(f"{OWN}edit.md")
    assert current is not None and changes[f"{OWN}edit.md"].after_generation == current.generation


async def test_what_came_back_to_where_it_was_and_what_failed_are_no_change(
    store: ObjectStore,
) -> None:
    await _seed(store)
    log = ChangeLog()
    tool = _tool(store, log)
    await run(tool, command="create", path=f"{MEMORIES}/brief.md", file_text="x\n")
    await run(tool, command="delete", path=f"{MEMORIES}/brief.md")
    await run(tool, command="str_replace", path=f"{MEMORIES}/keep.md", old_str="kept", new_str="k")
    await run(tool, command="str_replace", path=f"{MEMORIES}/keep.md", old_str="k", new_str="kept")
    await refused(tool, {"command": "create", "path": f"{MEMORIES}/edit.md", "file_text": "no"})
    await refused(tool, {"command": "delete", "path": f"{MEMORIES}/absent.md"})

    assert log.changes() == []


async def test_orions_own_records_are_written_past_the_log_and_never_undone(
    store: ObjectStore, backend: Backend
) -> None:
    """Orion writes the conversation's object (transcript, summary) after every answer:
    recorded, it would always have changed since, and block the undo of everything else
    the answer changed."""
    log = ChangeLog()
    await run(_tool(store, log), command="create", path=f"{MEMORIES}/new.md", file_text="new\n")
    undo_id = await save_undo_record(store, USER, log.changes(), ["…"], created_at=STARTED)
    assert undo_id is not None
    kept = conversation(USER, THREAD, messages=[("user", "Plans?"), ("assistant", "Here.")])
    await store.write(HOME.conversation_key(THREAD), kept)

    assert [change.key for change in log.changes()] == [f"{OWN}new.md"]
    assert (await undo_changes(store, undo_id, USER)).outcome is UndoOutcome.UNDONE
    assert backend.raw_read(f"{OWN}new.md") is None
    assert backend.raw_read(HOME.conversation_key(THREAD)) == kept


async def test_undo_puts_every_file_back_exactly_once(store: ObjectStore, backend: Backend) -> None:
    await _seed(store)
    before = _own(backend)
    undo_id = await _turn_kept_for_undo(store)

    first, second = await asyncio.gather(
        undo_changes(store, undo_id, USER), undo_changes(store, undo_id, USER)
    )

    assert sorted([first.outcome, second.outcome]) == sorted(
        [UndoOutcome.UNDONE, UndoOutcome.ALREADY_UNDONE]
    )
    assert _own(backend) == before


async def test_a_file_changed_since_blocks_the_whole_undo(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed(store)
    undo_id = await _turn_kept_for_undo(store)
    await store.write(f"{OWN}gone.md", "written again by hand\n")
    later = _own(backend)

    result = await undo_changes(store, undo_id, USER)

    assert result.outcome is UndoOutcome.CHANGED_SINCE
    assert result.changed_since == [f"{OWN}gone.md"]
    assert _own(backend) == later, "nothing undone"


async def test_someone_elses_click_reaches_nothing_of_the_owners(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed(store)
    undo_id = await _turn_kept_for_undo(store)
    after = _own(backend)

    # Their click looks in their own home only: nothing of the owner's is found there.
    result = await undo_changes(store, undo_id, "U0SOMEONE")

    assert result.outcome is UndoOutcome.GONE and result.lines == []
    assert _own(backend) == after
    assert (await undo_changes(store, undo_id, USER)).outcome is UndoOutcome.UNDONE


async def test_past_the_retention_window_the_undo_has_expired(
    store: ObjectStore, backend: Backend
) -> None:
    """Orion's view of the store hides a record older than the window, as it does every
    conversation's object (the bucket's lifecycle rule then deletes it)."""
    await _seed(store)
    undo_id = await _turn_kept_for_undo(store)
    after = _own(backend)
    later = SessionRetention(days=30, clock=lambda: datetime.now(UTC) + timedelta(days=31))

    result = await undo_changes(secret_free_store.kept(store, later), undo_id, USER)

    assert result.outcome is UndoOutcome.GONE
    assert _own(backend) == after


async def test_forgetting_a_conversation_or_a_note_drops_the_undos_that_would_bring_it_back(
    store: ObjectStore, backend: Backend
) -> None:
    """An answer deleted a file; the person then forgot it (its conversation, or the note).
    The file is still absent, so an undo would take it for "unchanged since the answer"
    and create it again: the records naming it go with what was forgotten."""
    await _seed(store)
    notes = HOME.notes_prefix(THREAD)
    await store.write(f"{notes}plan.md", "the plan\n")
    await store.write(HOME.conversation_key(THREAD), conversation(USER, THREAD))
    await store.write(HOME.profile_key, profile(conversations=[(THREAD, "Plans")]))

    async def answer(command: str, path: str, **fields: str) -> str:
        log = ChangeLog()
        await run(_tool(store, log), command=command, path=path, **fields)
        undo_id = await save_undo_record(store, USER, log.changes(), ["…"], created_at=STARTED)
        assert undo_id is not None
        return undo_id

    in_thread = await answer("delete", f"{SESSION}/plan.md")
    on_note = await answer("str_replace", f"{MEMORIES}/edit.md", old_str="one", new_str="1")
    elsewhere = await answer("create", f"{MEMORIES}/new.md", file_text="new\n")

    assert await forget_conversation(store, USER, THREAD) >= 1
    assert await forget_note(store, USER, f"{OWN}edit.md")

    for forgotten in (in_thread, on_note):
        assert (await undo_changes(store, forgotten, USER)).outcome is UndoOutcome.GONE
        assert backend.raw_read(HOME.undo_key(forgotten)) is None
    assert backend.raw_read(f"{notes}plan.md") is None, "not brought back"
    assert backend.raw_read(f"{OWN}edit.md") is None
    left = sorted(name for name in backend.raw_names() if name.startswith(f"{HOME.prefix}undo/"))
    assert left == [HOME.undo_key(elsewhere)]
    # An answer that touched neither is still undone.
    assert (await undo_changes(store, elsewhere, USER)).outcome is UndoOutcome.UNDONE
    assert backend.raw_read(f"{OWN}new.md") is None


async def test_an_answers_undo_kept_after_its_conversation_was_forgotten_keeps_nothing_of_it(
    store: ObjectStore, backend: Backend
) -> None:
    """A short exchange: the turn saved a note in the conversation and settled, and the
    person forgot the conversation before the note under the answer kept its undo record.
    No record is kept then; and one kept earlier, of what the person's own memory held
    (a preference learned there), names nothing of the conversation and goes with Forget
    everything."""
    await store.write(HOME.conversation_key(THREAD), conversation(USER, THREAD))
    await store.write(HOME.profile_key, profile(conversations=[(THREAD, "Plans")]))
    earlier = ChangeLog()
    await run(_tool(store, earlier), command="create", path=f"{MEMORIES}/name.md", file_text="Sam")
    learned_there = await save_undo_record(
        store, USER, earlier.changes(), ["Saved to memory: name.md"], created_at=STARTED
    )
    guard = await Guard.reading(store, HOME)  # the turn began
    changes = ChangeLog()
    scope = MemoryScope(USER, THREAD)
    tool = ScopedMemoryTool(ModelPathStore(RecordingStore(guard.store, changes), scope), scope)
    await run(tool, command="create", path=f"{SESSION}/plan.md", file_text="the launch plan\n")
    await guard.settle(thread_ts=THREAD)  # its end settled, then the person forgot it
    assert await forget_conversation(store, USER, THREAD) >= 1

    request = NoteRequest(USER, THREAD, STARTED, guard)
    note = await note_for_turn(request, changes, shown_by_default=True, budget_s=5)

    assert note is None
    undo = sorted(k for k in backend.raw_names() if k.startswith(f"{HOME.prefix}undo/"))
    assert undo == [HOME.undo_key(learned_there or "")]
    name = THREAD.replace(".", "-")
    naming = [
        k
        for k in backend.raw_names()
        if k != HOME.profile_key and (name in k or THREAD in (backend.raw_read(k) or ""))
    ]
    assert naming == [], "only the profile's mark names the forgotten conversation"
    await forget_everything(store, USER)
    assert [k for k in backend.raw_names() if k.startswith(HOME.prefix)] == [HOME.profile_key]


# A card number is digits alone, so its anchors are digits: its pattern refuses a run of
# digits next to a letter or a quote, which is how every run of them in a record's
# hexadecimal digits ends (checked below).
_DIGITS_ONLY = "card_number"


def test_no_secret_shape_can_be_spelled_in_the_digits_an_old_content_is_kept_as() -> None:
    """The undo record keeps each file's old content as hexadecimal digits so that the
    secret-redacting layer every write passes through cannot change it: it looks for a
    shape only where one of the shape's anchors occurs, and none may be spelled in 0-9a-f."""
    digits = set(string.hexdigits.lower())
    spellable = [
        (shape.name, anchor)
        for shape in SECRET_SHAPES
        for anchor in shape.anchors
        if set(anchor.lower() if shape.ignore_case else anchor) <= digits
        and shape.name != _DIGITS_ONLY
    ]
    assert spellable == []


@pytest.mark.parametrize(
    "content",
    [
        "4111111111111111",  # a valid card number's digits, as text: 34313131…
        "1234567",  # digits alone: hexadecimal of nothing but digits
        "card 4111 1111 1111 1111",
        # 7 to 9 digits: 14 to 18 hexadecimal digits, as long as a card number
        *(str(1_000_000 + 7_919_117 * n) for n in range(120)),
    ],
)
def test_no_card_number_is_found_in_the_digits_an_old_content_is_kept_as(content: str) -> None:
    record = json.dumps({"before_hex": content.encode().hex(), "id": "0" * 32})
    assert redact_secret_shapes(record) == record


async def test_a_record_kept_before_contents_were_kept_as_digits_is_still_undone(
    store: ObjectStore, backend: Backend
) -> None:
    await _seed(store)
    before = _own(backend)
    undo_id = await _turn_kept_for_undo(store)
    stored = await store.read(HOME.undo_key(undo_id))
    assert stored is not None
    record = json.loads(stored.content)
    for change in record["changes"]:  # as records were: the old content as text
        digits = change.pop("before_hex")
        change["before"] = None if digits is None else bytes.fromhex(digits).decode()
    await store.write(stored.key, json.dumps(record), if_generation=stored.generation)

    result = await undo_changes(store, undo_id, USER)

    assert result.outcome is UndoOutcome.UNDONE
    assert _own(backend) == before


# Local only: fake-gcs-server ignores preconditions on DELETE (real GCS enforces them), which
# tests/storage/test_delete_preconditions.py pins so the day it changes is noticed.
@pytest.mark.parametrize("backend", ["local"], indirect=True)
async def test_a_file_the_turn_wrote_is_not_deleted_over_someone_elses_change_since(
    store: ObjectStore, backend: Backend
) -> None:
    """The memory tool deletes without a generation; once the turn has written the file,
    the delete is conditional on what the turn left: a change made since by someone else
    is not deleted unseen (no undo could bring it back: it holds only the turn's before)."""
    await _seed(store)
    log = ChangeLog()
    tool = _tool(store, log)
    await run(tool, command="str_replace", path=f"{MEMORIES}/edit.md", old_str="one", new_str="1")
    await store.write(f"{OWN}edit.md", "edited elsewhere meanwhile\n")

    await refused(tool, {"command": "delete", "path": f"{MEMORIES}/edit.md"})

    assert backend.raw_read(f"{OWN}edit.md") == "edited elsewhere meanwhile\n"
    [change] = log.changes()
    assert (change.key, change.before, change.deleted) == (f"{OWN}edit.md", "one\ntwo\n", False)
