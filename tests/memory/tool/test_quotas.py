"""What one turn may do with the memory tool: a bounded number of commands, and no
directory past its byte quota — each refusal an error result Claude reads and one log line.
"""

from __future__ import annotations

import io
import json

import pytest

from app.memory.scopes import MemoryScope, session_prefix
from app.memory.tool.access import MAX_BYTES_PER_DIRECTORY, MAX_FILE_BYTES
from app.memory.tool.scoped_tool import MAX_CALLS_PER_TURN, ScopedMemoryTool
from app.observability.logging import configure_logging
from tests.backends import THREAD, USER, Backend
from tests.memory.tool.helpers import refused, run

MINE = f"/memories/users/{USER}"
SESSION = f"/memories/{session_prefix(THREAD)}".rstrip("/")
FULL_FILE = "x" * MAX_FILE_BYTES
HALF_FILE = "x" * (MAX_FILE_BYTES // 2)


@pytest.fixture
def log() -> io.StringIO:
    stream = io.StringIO()
    configure_logging(level="INFO", fmt="json", stream=stream)
    return stream


def refusals(stream: io.StringIO) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    return [line for line in lines if line["message"].startswith("tool.memory.") and not line["ok"]]


def test_the_limits_are_what_the_docs_say() -> None:
    assert MAX_CALLS_PER_TURN == 30
    assert MAX_BYTES_PER_DIRECTORY == 1024 * 1024


async def test_a_turn_runs_at_most_its_number_of_commands(
    backend: Backend, scope: MemoryScope, log: io.StringIO
) -> None:
    tool = ScopedMemoryTool(backend.store, scope, max_calls=3)
    for n in range(3):
        await run(tool, command="create", path=f"{MINE}/f{n}.md", file_text=str(n))

    late = {"command": "create", "path": f"{MINE}/f3.md", "file_text": "3"}
    message = await refused(tool, late)
    assert "at most 3 memory commands" in message and "did not run" in message
    assert "at most 3" in await refused(tool, {"command": "view", "path": MINE})
    assert sorted(backend.raw_names()) == [f"users/{USER}/f{n}.md" for n in range(3)]
    [create, view] = refusals(log)
    assert create["message"] == "tool.memory.create" and view["message"] == "tool.memory.view"
    assert create["error"] == "over the turn's limit of 3 memory commands"
    assert create["severity"] == "WARNING"

    # The next turn has a tool of its own, and its own count.
    next_turn = ScopedMemoryTool(backend.store, scope, max_calls=3)
    await run(next_turn, command="create", path=f"{MINE}/f3.md", file_text="3")


async def test_a_directory_holds_at_most_its_quota_of_bytes(
    backend: Backend, scope: MemoryScope, log: io.StringIO
) -> None:
    tool = ScopedMemoryTool(backend.store, scope, max_bytes_per_directory=250 * 1024)
    await run(tool, command="create", path=f"{MINE}/a.md", file_text=FULL_FILE)
    await run(tool, command="create", path=f"{MINE}/b.md", file_text=FULL_FILE)

    over = {"command": "create", "path": f"{MINE}/c.md", "file_text": FULL_FILE}
    message = await refused(tool, over)

    assert f"{MINE}/ would hold 300 KB" in message and "at most 250 KB" in message
    assert sorted(backend.raw_names()) == [f"users/{USER}/a.md", f"users/{USER}/b.md"]
    [line] = refusals(log)
    assert line["error"] == f"Cannot write {MINE}/c.md: {MINE}/ over its 250 KB quota"
    # What fits still does, and the thread's directory has a quota of its own.
    await run(tool, command="create", path=f"{MINE}/c.md", file_text="x" * 40 * 1024)
    await run(tool, command="create", path=f"{SESSION}/s.md", file_text=FULL_FILE)


async def test_edits_that_grow_a_full_directory_are_refused_and_shrinking_ones_run(
    backend: Backend, scope: MemoryScope
) -> None:
    await backend.store.write(f"users/{USER}/a.md", FULL_FILE)
    await backend.store.write(f"users/{USER}/b.md", HALF_FILE + "MARK\n")
    # Over the quota already (written before there was one): it may only shrink.
    tool = ScopedMemoryTool(backend.store, scope, max_bytes_per_directory=150 * 1024)
    grow = {
        "command": "str_replace",
        "path": f"{MINE}/b.md",
        "old_str": "MARK",
        "new_str": "MM" * 9,
    }
    assert "at most 150 KB" in await refused(tool, grow)
    insert = {"command": "insert", "path": f"{MINE}/b.md", "insert_line": 0, "insert_text": "more"}
    assert "at most 150 KB" in await refused(tool, insert)
    assert backend.raw_read(f"users/{USER}/b.md") == HALF_FILE + "MARK\n"

    await run(tool, command="str_replace", path=f"{MINE}/b.md", old_str="MARK", new_str="M")
    await run(tool, command="delete", path=f"{MINE}/a.md")
    await run(tool, command="insert", path=f"{MINE}/b.md", insert_line=0, insert_text="room now")
    assert (backend.raw_read(f"users/{USER}/b.md") or "").startswith("room now\n")


async def test_moving_files_into_a_full_directory_is_refused(
    backend: Backend, scope: MemoryScope
) -> None:
    tool = ScopedMemoryTool(backend.store, scope, max_bytes_per_directory=150 * 1024)
    await run(tool, command="create", path=f"{MINE}/a.md", file_text=FULL_FILE)
    await run(tool, command="create", path=f"{SESSION}/big/s.md", file_text=FULL_FILE)

    spill = {"command": "rename", "old_path": f"{SESSION}/big", "new_path": f"{MINE}/big"}
    assert "at most 150 KB" in await refused(tool, spill)
    # Within one directory a move adds nothing.
    await run(tool, command="rename", old_path=f"{MINE}/a.md", new_path=f"{MINE}/moved.md")
    assert f"users/{USER}/big/s.md" not in backend.raw_names()
