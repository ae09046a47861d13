"""Property test of the memory tool's whole input surface: whatever the model sends, the
result is a tool result (never an exception), and nothing outside the scope is touched."""

from __future__ import annotations

import asyncio
from pathlib import Path

from anthropic.tools import ToolError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.memory.scopes import MemoryScope
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.storage.local_directory import LocalDirectoryStore

USER, THREAD = "U0FUZZ01", "1712345678.123456"
OTHER_KEYS = {
    "users/U0OTHER01/secret.md": "OTHER-USER-SECRET",
    "sessions/1600000000-000001/context.md": "OTHER-THREAD-SECRET",
    "global/context.md": "GLOBAL-CONTEXT",
}

segments = st.sampled_from(
    [
        "users",
        USER,
        "U0OTHER01",
        "sessions",
        "1712345678-123456",
        "1600000000-000001",
        "global",
        "..",
        "%2e%2e",
        "%2f",
        "\\",
        ".",
        "",
        "notes.md",
        "secret.md",
        "context.md",
        "\x00",
        "é",
        "memoriesX",
        " ",
    ]
)
paths = st.one_of(
    st.lists(segments, max_size=6).map(lambda parts: "/memories/" + "/".join(parts)),
    st.lists(segments, max_size=6).map("/".join),
    st.text(max_size=40),
)
values = st.one_of(
    st.none(), st.integers(), st.text(max_size=30), st.lists(st.integers(-5, 50), max_size=3), paths
)
commands = st.fixed_dictionaries(
    {
        "command": st.sampled_from(
            ["view", "create", "str_replace", "insert", "delete", "rename", "explode", 7]
        )
    },
    optional={
        "path": st.one_of(paths, values),
        "old_path": paths,
        "new_path": paths,
        "file_text": values,
        "old_str": values,
        "new_str": values,
        "insert_line": values,
        "insert_text": values,
        "view_range": values,
    },
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=st.lists(st.one_of(commands, values), min_size=1, max_size=5))
def test_any_input_is_a_tool_result_and_stays_in_scope(tmp_path: Path, batch: list[object]) -> None:
    async def run() -> None:
        store = LocalDirectoryStore(tmp_path / "memories")
        for key, content in OTHER_KEYS.items():
            if await store.read(key) is None:
                await store.write(key, content)
        tool = ScopedMemoryTool(store, MemoryScope(USER, THREAD))
        for command in batch:
            try:
                result = await tool.call(command)
            except ToolError as error:
                result = error.content
            text = str(result)
            assert "OTHER-USER-SECRET" not in text and "OTHER-THREAD-SECRET" not in text
        for key, content in OTHER_KEYS.items():
            stored = await store.read(key)
            assert stored is not None and stored.content == content, f"{key} was touched"
        for info in await store.list(""):
            allowed = ("users/U0FUZZ01/", "sessions/1712345678-123456/", *OTHER_KEYS)
            assert info.key.startswith(allowed), f"wrote outside the scope: {info.key}"

    asyncio.run(run())
