"""A rename that races a change to the file it moves: the change is kept, the copy undone.

A bucket cannot rename: the tool copies (create-only), then deletes the original only if
it is still the generation it copied. The race is made certain with a store on which the
file is rewritten just before that delete arrives. On the local directory store, which
enforces delete preconditions as GCS does: fake-gcs-server ignores them, and there the
change would be lost without the test noticing (tests/storage/test_delete_preconditions.py).
"""

from __future__ import annotations

from pathlib import Path

from app.memory.scopes import MemoryScope
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.storage.local_directory import LocalDirectoryStore
from tests.backends import THREAD, USER
from tests.memory.tool.helpers import refused, run
from tests.storage.test_delete_preconditions import ChangedBeforeDelete

OLD_KEY, NEW_KEY = f"users/{USER}/notes.md", f"users/{USER}/archive/notes.md"
OLD_PATH, NEW_PATH = f"/memories/{OLD_KEY}", f"/memories/{NEW_KEY}"


async def test_a_file_changed_while_it_was_renamed_keeps_the_change_and_stays_put(
    tmp_path: Path,
) -> None:
    store = LocalDirectoryStore(tmp_path)
    await store.write(OLD_KEY, "first draft\n")
    racing = ChangedBeforeDelete(store, OLD_KEY, "edited meanwhile\n")
    tool = ScopedMemoryTool(racing, MemoryScope(USER, THREAD))

    error = await refused(tool, {"command": "rename", "old_path": OLD_PATH, "new_path": NEW_PATH})

    assert "changed by someone else" in error
    assert racing.remaining == 0, "the race happened"
    stored = await store.read(OLD_KEY)
    assert stored is not None and stored.content == "edited meanwhile\n"
    assert await store.read(NEW_KEY) is None, "the copy was undone"


async def test_an_unchanged_file_is_renamed(tmp_path: Path) -> None:
    store = LocalDirectoryStore(tmp_path)
    await store.write(OLD_KEY, "first draft\n")
    tool = ScopedMemoryTool(store, MemoryScope(USER, THREAD))

    renamed = await run(tool, command="rename", old_path=OLD_PATH, new_path=NEW_PATH)

    assert renamed == f"Successfully renamed {OLD_PATH} to {NEW_PATH}"
    assert await store.read(OLD_KEY) is None
    moved = await store.read(NEW_KEY)
    assert moved is not None and moved.content == "first draft\n"
