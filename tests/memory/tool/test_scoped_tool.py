"""ScopedMemoryTool: the six commands on both backends, scope, input checks, limits,
concurrency and what reaches traces and logs."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import pytest
from anthropic.tools import ToolError

from app.memory.homes import person
from app.memory.scopes import MemoryScope
from app.memory.tool.access import MAX_FILE_BYTES
from app.memory.tool.guide import memory_tool_guide
from app.memory.tool.model_paths import ModelPathStore
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.observability.logging import configure_logging
from tests import log_events
from tests.backends import OTHER_THREAD, OTHER_USER, THREAD, USER, Backend
from tests.memory.tool.helpers import refused, run
from tests.span_log import SpanLog

MINE = f"/memories/users/{USER}"
SESSION = f"/memories/sessions/{THREAD.replace('.', '-')}"
OTHER_SESSION = f"/memories/sessions/{OTHER_THREAD.replace('.', '-')}"
# Where the model's paths live in the store: in the person's home (app/memory/homes.py).
MY_MEMORY = person(USER).memory_prefix
MY_NOTES = person(USER).notes_prefix(THREAD)
SECRET = "OTHER-USER-SECRET-b7f1"
OTHER_THREAD_SECRET = "OTHER-THREAD-SECRET-9c2e"


def _tool(backend: Backend, scope: MemoryScope, **limits: int) -> ScopedMemoryTool:
    """The tool as a turn has it: over the store, through the map into the owner's home."""
    return ScopedMemoryTool(ModelPathStore(backend.store, scope), scope, **limits)


@pytest.fixture
def tool(backend: Backend, scope: MemoryScope) -> ScopedMemoryTool:
    return _tool(backend, scope)


@pytest.fixture
async def planted(backend: Backend) -> None:
    """Memories of another user and another thread, which this scope must never see."""
    await backend.store.write(f"{person(OTHER_USER).memory_prefix}secret.md", f"{SECRET}\n")
    await backend.store.write(
        f"{person(USER).notes_prefix(OTHER_THREAD)}context.md", OTHER_THREAD_SECRET
    )
    await backend.store.write("global/context.md", "Acme builds rockets.\n")


async def test_the_six_commands_change_the_objects_in_the_store(
    backend: Backend, tool: ScopedMemoryTool
) -> None:
    path, key = f"{MINE}/notes.md", f"{MY_MEMORY}notes.md"

    created = await run(tool, command="create", path=path, file_text="alpha\nbeta\n")
    assert created == f"File created successfully at: {path}"
    assert backend.raw_names() == [key]
    assert backend.raw_read(key) == "alpha\nbeta\n"

    assert await run(tool, command="view", path=path) == (
        f"Here's the content of {path} with line numbers:\n     1\talpha\n     2\tbeta\n     3\t"
    )

    replaced = await run(tool, command="str_replace", path=path, old_str="beta", new_str="gamma")
    assert replaced == (
        "The memory file has been edited. Here is the snippet showing the change (with line "
        "numbers):\n     1\talpha\n     2\tgamma\n     3\t"
    )
    assert backend.raw_read(key) == "alpha\ngamma\n"
    assert "2\tgamma" in await run(tool, command="view", path=path)

    inserted = await run(tool, command="insert", path=path, insert_line=1, insert_text="between\n")
    assert inserted == f"The file {path} has been edited."
    assert backend.raw_read(key) == "alpha\nbetween\ngamma\n"

    new_path, new_key = f"{SESSION}/kept.md", f"{MY_NOTES}kept.md"
    renamed = await run(tool, command="rename", old_path=path, new_path=new_path)
    assert renamed == f"Successfully renamed {path} to {new_path}"
    assert backend.raw_names() == [new_key]
    assert backend.raw_read(new_key) == "alpha\nbetween\ngamma\n"

    assert await run(tool, command="delete", path=new_path) == f"Successfully deleted {new_path}"
    assert backend.raw_names() == []


async def test_directories_are_listed_two_levels_deep_from_key_prefixes(
    backend: Backend, tool: ScopedMemoryTool
) -> None:
    for name, text in [("a.md", "12345"), ("sub/b.md", "123"), ("sub/deep/c.md", "1234567")]:
        await run(tool, command="create", path=f"{MINE}/{name}", file_text=text)

    listing = await run(tool, command="view", path=MINE)

    assert listing.splitlines() == [
        f"Here're the files and directories up to 2 levels deep in {MINE}, excluding hidden items:",
        f"15B\t{MINE}",
        f"5B\t{MINE}/a.md",
        f"10B\t{MINE}/sub/",
        f"3B\t{MINE}/sub/b.md",
        f"7B\t{MINE}/sub/deep/",
    ]


async def test_directories_can_be_renamed_and_deleted_as_prefixes(
    backend: Backend, tool: ScopedMemoryTool
) -> None:
    for name in ("proj/a.md", "proj/sub/b.md"):
        await run(tool, command="create", path=f"{MINE}/{name}", file_text=name)

    await run(tool, command="rename", old_path=f"{MINE}/proj", new_path=f"{MINE}/archive/proj")
    assert backend.raw_names() == [
        f"{MY_MEMORY}archive/proj/a.md",
        f"{MY_MEMORY}archive/proj/sub/b.md",
    ]
    assert backend.raw_read(f"{MY_MEMORY}archive/proj/sub/b.md") == "proj/sub/b.md"

    await run(tool, command="delete", path=f"{MINE}/archive")
    assert backend.raw_names() == []


async def test_the_user_may_clear_their_whole_directory(
    backend: Backend, tool: ScopedMemoryTool, planted: None
) -> None:
    await run(tool, command="create", path=f"{MINE}/a.md", file_text="a")
    await run(tool, command="create", path=f"{MINE}/b/c.md", file_text="c")

    assert await run(tool, command="delete", path=MINE) == f"Successfully deleted {MINE}"

    assert not [name for name in backend.raw_names() if name.startswith(MY_MEMORY)]
    assert backend.raw_read(f"{person(OTHER_USER).memory_prefix}secret.md") == f"{SECRET}\n"


async def test_global_context_is_readable(tool: ScopedMemoryTool, planted: None) -> None:
    view = await run(tool, command="view", path="/memories/global/context.md")
    assert view.endswith("     1\tAcme builds rockets.\n     2\t")


async def test_shared_directories_list_only_this_conversations_memory(
    tool: ScopedMemoryTool, planted: None
) -> None:
    await run(tool, command="create", path=f"{MINE}/notes.md", file_text="mine")
    await run(tool, command="create", path=f"{SESSION}/context.md", file_text="this thread")

    root = await run(tool, command="view", path="/memories")
    users = await run(tool, command="view", path="/memories/users")
    sessions = await run(tool, command="view", path="/memories/sessions/")

    assert root.splitlines()[1:] == [
        "36B\t/memories",
        "21B\t/memories/global/",
        "21B\t/memories/global/context.md",
        "11B\t/memories/sessions/",
        f"11B\t{SESSION}/",
        "4B\t/memories/users/",
        f"4B\t{MINE}/",
    ]
    assert users.splitlines()[1:] == [
        "4B\t/memories/users",
        f"4B\t{MINE}/",
        f"4B\t{MINE}/notes.md",
    ]
    for listing in (root, users, sessions):
        assert OTHER_USER not in listing
        assert OTHER_THREAD.replace(".", "-") not in listing
        assert SECRET not in listing and OTHER_THREAD_SECRET not in listing
    assert f"{SESSION}/context.md" in sessions
    assert "/memories/sessions/" in root and f"{MINE}/" in root


OUT_OF_SCOPE: list[dict[str, Any]] = [
    {"command": "view", "path": f"/memories/users/{OTHER_USER}/secret.md"},
    {"command": "view", "path": f"/memories/users/{OTHER_USER}"},
    {"command": "view", "path": f"/memories/users/{OTHER_USER}/"},
    {"command": "view", "path": f"{OTHER_SESSION}/context.md"},
    {"command": "view", "path": f"{MINE}/../{OTHER_USER}/secret.md"},
    {"command": "view", "path": f"/memories/users/%2e%2e/users/{OTHER_USER}/secret.md"},
    {"command": "view", "path": f"{MINE}/%2e%2e/{OTHER_USER}/secret.md"},
    {"command": "view", "path": f"/memories/users/{USER}%2f..%2f{OTHER_USER}/secret.md"},
    {"command": "view", "path": f"/memories/users\\{OTHER_USER}\\secret.md"},
    {"command": "view", "path": f"/memoriesX/users/{OTHER_USER}/secret.md"},
    {"command": "view", "path": "/etc/passwd"},
    {"command": "view", "path": f"/memories/users/{USER}X/secret.md"},
    {"command": "create", "path": "/memories/global/new.md", "file_text": "x"},
    {"command": "create", "path": f"/memories/users/{OTHER_USER}/new.md", "file_text": "x"},
    {"command": "create", "path": f"{OTHER_SESSION}/new.md", "file_text": "x"},
    {"command": "create", "path": "/memories/new.md", "file_text": "x"},
    {
        "command": "str_replace",
        "path": f"/memories/users/{OTHER_USER}/secret.md",
        "old_str": SECRET,
        "new_str": "pwned",
    },
    {
        "command": "str_replace",
        "path": "/memories/global/context.md",
        "old_str": "A",
        "new_str": "B",
    },
    {
        "command": "insert",
        "path": f"/memories/users/{OTHER_USER}/secret.md",
        "insert_line": 0,
        "insert_text": "pwned",
    },
    {"command": "delete", "path": f"/memories/users/{OTHER_USER}/secret.md"},
    {"command": "delete", "path": f"/memories/users/{OTHER_USER}"},
    {"command": "delete", "path": "/memories/global"},
    {"command": "delete", "path": "/memories/users"},
    {"command": "delete", "path": "/memories"},
    {
        "command": "rename",
        "old_path": f"/memories/users/{OTHER_USER}/secret.md",
        "new_path": f"{MINE}/stolen.md",
    },
    {"command": "rename", "old_path": "/memories/global/context.md", "new_path": f"{MINE}/g.md"},
    {
        "command": "rename",
        "old_path": f"{MINE}/a.md",
        "new_path": f"/memories/users/{OTHER_USER}/a.md",
    },
]


@pytest.mark.parametrize(
    "command", OUT_OF_SCOPE, ids=lambda c: f"{c['command']}:{c.get('path') or c['old_path']}"
)
async def test_out_of_scope_paths_are_errors_that_leak_nothing(
    backend: Backend, tool: ScopedMemoryTool, planted: None, command: dict[str, Any]
) -> None:
    await run(tool, command="create", path=f"{MINE}/a.md", file_text="mine")
    before = {name: backend.raw_read(name) for name in backend.raw_names()}

    message = await refused(tool, command)

    assert SECRET not in message and OTHER_THREAD_SECRET not in message
    assert "rockets" not in message
    assert {name: backend.raw_read(name) for name in backend.raw_names()} == before


async def test_denials_do_not_reveal_whether_another_users_file_exists(
    tool: ScopedMemoryTool, planted: None
) -> None:
    existing = f"/memories/users/{OTHER_USER}/secret.md"
    missing = f"/memories/users/{OTHER_USER}/nothing-here.md"
    for command in ("view", "delete"):
        about_existing = await refused(tool, {"command": command, "path": existing})
        about_missing = await refused(tool, {"command": command, "path": missing})
        assert about_existing.replace(existing, "P") == about_missing.replace(missing, "P")
        assert about_existing.startswith("Access denied:")


@pytest.mark.parametrize(
    "command_input",
    [
        None,
        "view /memories",
        ["view", "/memories"],
        {},
        {"command": 1},
        {"command": "update", "path": "/memories"},
        {"command": "view"},
        {"command": "view", "path": None},
        {"command": "view", "path": 7},
        {"command": "view", "path": f"{MINE}/a.md", "view_range": "1-2"},
        {"command": "view", "path": f"{MINE}/a.md", "view_range": [1.5, 2]},
        {"command": "create", "path": f"{MINE}/a.md"},
        {"command": "create", "path": f"{MINE}/a.md", "file_text": 5},
        {"command": "create", "path": f"{MINE}/a.md", "file_text": None},
        {"command": "str_replace", "path": f"{MINE}/a.md", "old_str": None, "new_str": "x"},
        {"command": "str_replace", "path": f"{MINE}/a.md", "old_str": "x"},
        {"command": "insert", "path": f"{MINE}/a.md", "insert_line": "1", "insert_text": "x"},
        {"command": "insert", "path": f"{MINE}/a.md", "insert_line": True, "insert_text": "x"},
        {"command": "insert", "path": f"{MINE}/a.md", "insert_line": 0},
        {"command": "delete", "path": ["/memories"]},
        {"command": "rename", "old_path": f"{MINE}/a.md"},
        {"command": "rename", "old_path": f"{MINE}/a.md", "new_path": {"x": 1}},
    ],
)
async def test_malformed_input_is_an_error_result(
    backend: Backend, tool: ScopedMemoryTool, command_input: object
) -> None:
    await run(tool, command="create", path=f"{MINE}/a.md", file_text="a\nb\n")

    message = await refused(tool, command_input)

    assert message.startswith("Invalid")
    assert backend.raw_read(f"{MY_MEMORY}a.md") == "a\nb\n"


async def test_files_over_100_kb_are_refused(backend: Backend, tool: ScopedMemoryTool) -> None:
    path, key = f"{MINE}/big.md", f"{MY_MEMORY}big.md"
    assert MAX_FILE_BYTES == 100 * 1024

    too_big = await refused(
        tool, {"command": "create", "path": path, "file_text": "x" * (MAX_FILE_BYTES + 1)}
    )
    assert "100 KB" in too_big
    assert backend.raw_names() == []

    almost_full = "MARK" + "é" * ((MAX_FILE_BYTES - 6) // 2)  # 2 bytes under the limit
    await run(tool, command="create", path=path, file_text=almost_full)
    grown = {"command": "str_replace", "path": path, "old_str": "MARK", "new_str": "MARKMARK"}
    assert "100 KB" in await refused(tool, grown)
    inserted = {"command": "insert", "path": path, "insert_line": 0, "insert_text": "xyz"}
    assert "100 KB" in await refused(tool, inserted)
    assert backend.raw_read(key) == almost_full


async def test_each_directory_holds_a_bounded_number_of_files(
    backend: Backend, scope: MemoryScope
) -> None:
    tool = _tool(backend, scope, max_files_per_directory=3)
    for n in range(3):
        await run(tool, command="create", path=f"{MINE}/f{n}.md", file_text=str(n))

    message = await refused(tool, {"command": "create", "path": f"{MINE}/f3.md", "file_text": "3"})
    assert "at most 3" in message
    # The thread's directory has its own allowance, but cannot spill into the full one.
    await run(tool, command="create", path=f"{SESSION}/s.md", file_text="s")
    spill = {"command": "rename", "old_path": f"{SESSION}/s.md", "new_path": f"{MINE}/s.md"}
    assert "at most 3" in await refused(tool, spill)
    # Renaming within the full directory is fine.
    await run(tool, command="rename", old_path=f"{MINE}/f0.md", new_path=f"{MINE}/zero.md")
    assert len(backend.raw_names()) == 4


async def test_a_file_cannot_be_created_inside_a_file(tool: ScopedMemoryTool) -> None:
    await run(tool, command="create", path=f"{MINE}/notes.md", file_text="x")

    message = await refused(
        tool, {"command": "create", "path": f"{MINE}/notes.md/inner.md", "file_text": "y"}
    )

    assert message == (
        f"Cannot create {MINE}/notes.md/inner.md: {MINE}/notes.md is a file, not a directory"
    )


async def test_concurrent_edits_through_the_tool_never_lose_a_change(
    backend: Backend, scope: MemoryScope
) -> None:
    path = f"{MINE}/log.md"
    await run(_tool(backend, scope), command="create", path=path, file_text="")

    async def add(n: int) -> str | None:
        # One tool per turn, as in production: ten turns edit one file at once.
        tool = _tool(backend, scope)
        try:
            await run(tool, command="insert", path=path, insert_line=0, insert_text=f"entry {n}")
        except ToolError as error:
            assert "changed by someone else" in str(error.content)
            return None
        return f"entry {n}"

    made = {entry for entry in await asyncio.gather(*(add(n) for n in range(10))) if entry}

    content = backend.raw_read(f"{MY_MEMORY}log.md")
    assert content is not None
    assert set(content.splitlines()) == made
    assert len(made) >= 5  # bounded retries still let most concurrent edits through


async def test_each_command_is_one_span_without_file_contents(
    spans: SpanLog, tool: ScopedMemoryTool
) -> None:
    path, moved = f"{MINE}/span.md", f"{MINE}/moved.md"
    markers = ["CREATE-TEXT-4e1", "OLD-TEXT-77a", "NEW-TEXT-0b3", "INSERTED-TEXT-9d2"]
    await run(tool, command="create", path=path, file_text=f"{markers[0]}\n{markers[1]}\n")
    await run(tool, command="view", path=path)
    await run(tool, command="str_replace", path=path, old_str=markers[1], new_str=markers[2])
    await run(tool, command="insert", path=path, insert_line=0, insert_text=markers[3])
    await run(tool, command="rename", old_path=path, new_path=moved)
    await refused(
        tool, {"command": "str_replace", "path": moved, "old_str": markers[1], "new_str": "x"}
    )
    await run(tool, command="delete", path=moved)

    names = [name for name in spans.names() if name.startswith("tool.memory.")]
    assert sorted(names) == sorted(
        f"tool.memory.{c}"
        for c in ("create", "view", "str_replace", "insert", "rename", "str_replace", "delete")
    )
    for span in spans.all():
        attributes = spans.attributes(span)
        assert attributes["langfuse.observation.type"] == "tool"
        metadata = json.dumps(
            {k: v for k, v in attributes.items() if k.startswith("langfuse.observation.metadata")},
            default=str,
        )
        assert "duration_ms" in metadata and "outcome" in metadata
    [failed] = [
        span
        for span in spans.named("tool.memory.str_replace")
        if spans.attributes(span).get("langfuse.observation.level") == "WARNING"
    ]
    failed_attributes = spans.attributes(failed)
    assert failed_attributes["langfuse.observation.input"]["path"] == moved
    assert "old_str did not appear" in failed_attributes["langfuse.observation.status_message"]
    exported = spans.text()
    for marker in markers:
        assert marker not in exported


async def test_each_command_logs_one_line_with_path_outcome_and_duration(
    tool: ScopedMemoryTool,
) -> None:
    stream = io.StringIO()
    configure_logging(level="INFO", fmt="json", stream=stream)
    path = f"{MINE}/logged.md"

    await run(tool, command="create", path=path, file_text="LOGGED-CONTENT-5f1")
    await refused(tool, {"command": "view", "path": f"{MINE}/missing.md"})
    await refused(
        tool, {"command": "str_replace", "path": path, "old_str": "LOGGED-OLD-3c", "new_str": "x"}
    )

    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    memory_lines = [line for line in lines if line["message"].startswith("tool.memory.")]
    assert [line["message"] for line in memory_lines] == [
        log_events.TOOL_MEMORY_CREATE,
        log_events.TOOL_MEMORY_VIEW,
        log_events.TOOL_MEMORY_STR_REPLACE,
    ]
    created, missing, not_replaced = memory_lines
    assert (created["path"], created["ok"], created["severity"]) == (path, True, "INFO")
    assert created["duration_ms"] >= 0
    assert (missing["ok"], missing["severity"]) == (False, "WARNING")
    assert missing["error"].startswith(f"The path {MINE}/missing.md does not exist")
    assert not_replaced["ok"] is False
    assert "LOGGED-CONTENT" not in stream.getvalue() and "LOGGED-OLD" not in stream.getvalue()


def test_the_guide_names_this_conversations_directories(scope: MemoryScope) -> None:
    guide = memory_tool_guide(scope)

    assert "/memories/global/" in guide and "read-only" in guide
    assert f"/memories/users/{USER}/" in guide
    assert f"{SESSION}/" in guide
    assert "view /memories" in guide
