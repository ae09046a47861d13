"""Claude as the attacker, on the deployment's own record: the layout mark every start writes
(`deployment/layout.json`, app/learning/upgrade.py) decides which objects of a channel's home
an upgrade takes for the old layout's memory. No memory-tool path reaches it, however it is
spelled: `..` segments, percent-escapes, look-alike dots and slashes, backslashes, NUL bytes,
paths outside `/memories`; neither as the file written, replaced, deleted, nor as a rename's
source or destination, nor as a note the `forget` tool is asked to forget. Each is an error
result for the model; the mark stays as written.

Tried in round 9: all held (the checks are app/memory/scopes.py's `to_key` and the map into
the conversation's own homes, app/memory/tool/model_paths.py); kept so they keep holding.
"""

from __future__ import annotations

from typing import Any

import pytest
from anthropic.tools import ToolError

from app.learning.memory_tools import ForgetTool
from app.learning.upgrade import LAYOUT_MARKER
from app.memory.scopes import ChannelMemoryScope, MemoryScope, ScopeRules
from app.memory.tool.model_paths import ModelPathStore
from app.memory.tool.scoped_tool import ScopedMemoryTool
from tests.backends import THREAD, USER, Backend
from tests.memory.tool.helpers import refused, run

CHANNEL = "C0LAYOUT1"
MARK = '{"layout": "homes"}'
MINE = f"/memories/users/{USER}"
OURS = f"/memories/channels/{CHANNEL}"

# Every way of spelling the mark's key the attacker tried, from each writable root.
SPELLINGS = [
    f"/{LAYOUT_MARKER}",
    LAYOUT_MARKER,
    f"/memories/{LAYOUT_MARKER}",
    f"/memories/../{LAYOUT_MARKER}",
    f"/memories/global/../../{LAYOUT_MARKER}",
    f"/memories/users/{USER}/../../../{LAYOUT_MARKER}",
    f"/memories/channels/{CHANNEL}/../../../{LAYOUT_MARKER}",
    f"/memories/sessions/../{LAYOUT_MARKER}",
    f"/memories/%2e%2e/{LAYOUT_MARKER}",
    f"/memories/users/{USER}/%2e%2e%2f%2e%2e%2f%2e%2e%2f{LAYOUT_MARKER}",
    f"/memories/users/{USER}/%252e%252e/{LAYOUT_MARKER}",
    f"/memories/users/{USER}/\uff0e\uff0e/\uff0e\uff0e/\uff0e\uff0e/{LAYOUT_MARKER}",  # ．．
    f"/memories/users/{USER}/\u2025/\u2025/\u2025/{LAYOUT_MARKER}",  # ‥ (two dot leader)
    f"/memories/users/{USER}\uff0f..\uff0f..\uff0f..\uff0f{LAYOUT_MARKER}",  # ／
    f"/memories/users/{USER}\u2215..\u2215..\u2215deployment\u2215layout.json",  # ∕
    f"/memories/users/{USER}/..\\..\\..\\deployment\\layout.json",
    f"/memories/users/{USER}/\x00/../../../{LAYOUT_MARKER}",
    f"/memories/users/{USER}/\u202e../../../{LAYOUT_MARKER}",
    f"/memories//{LAYOUT_MARKER}",
    f"/memories/users/{USER}//../../{LAYOUT_MARKER}",
    f"file:///memories/../{LAYOUT_MARKER}",
]


def _commands(spelling: str, own: str) -> list[dict[str, Any]]:
    return [
        {"command": "create", "path": spelling, "file_text": '{"layout": "old"}'},
        {"command": "str_replace", "path": spelling, "old_str": "homes", "new_str": "old"},
        {"command": "insert", "path": spelling, "insert_line": 0, "insert_text": "x"},
        {"command": "delete", "path": spelling},
        {"command": "rename", "old_path": spelling, "new_path": f"{own}/mark.json"},
        {"command": "rename", "old_path": f"{own}/note.md", "new_path": spelling},
        {"command": "view", "path": spelling},
    ]


@pytest.mark.parametrize(
    ("scope", "own"),
    [
        (MemoryScope(user_id=USER, thread_ts=THREAD), MINE),
        (ChannelMemoryScope(channel_id=CHANNEL), OURS),
    ],
    ids=["a person's turn", "a channel's turn"],
)
async def test_no_memory_tool_path_reaches_the_layout_mark(
    backend: Backend, scope: ScopeRules, own: str
) -> None:
    await backend.store.write(LAYOUT_MARKER, MARK)
    tool = ScopedMemoryTool(ModelPathStore(backend.store, scope), scope, max_calls=10_000)
    await run(tool, command="create", path=f"{own}/note.md", file_text="a note\n")
    before = {name: backend.raw_read(name) for name in backend.raw_names()}

    for spelling in SPELLINGS:
        for command in _commands(spelling, own):
            message = await refused(tool, command)
            assert "homes" not in message, (command, message)

    assert {name: backend.raw_read(name) for name in backend.raw_names()} == before
    assert backend.raw_read(LAYOUT_MARKER) == MARK


async def test_no_forget_tool_note_path_reaches_the_layout_mark(backend: Backend) -> None:
    await backend.store.write(LAYOUT_MARKER, MARK)
    forget = ForgetTool(backend.store, MemoryScope(user_id=USER, thread_ts=THREAD))

    for spelling in SPELLINGS:
        with pytest.raises(ToolError):
            await forget.call({"kind": "note", "id": spelling})

    assert backend.raw_names() == [LAYOUT_MARKER]
    assert backend.raw_read(LAYOUT_MARKER) == MARK
