"""Claude as the attacker, with names as long as a path may be: a file name over a file
system's 255 bytes, or a path whose key in the bucket (under its owner's home, in a
workspace's keys) would pass the 1,024 bytes Cloud Storage allows an object name.

Found by the attacker (round 9): a 300-letter name (or 60 emoji) was told "Memory storage is
temporarily unavailable ... continue without it" (with `MEMORY_DIR`) and logged as a storage
failure; a path of four names of 62 emoji (1,011 bytes) passed the check, and under a
conversation's home made a key of 1,033 bytes, past the 1,024 Cloud Storage documents for an
object name (the emulator does not enforce it). Both are now refused before any storage
request, with what is wrong, like any other bad path.
"""

from __future__ import annotations

import pytest

from app.memory.scopes import MemoryScope
from app.memory.tool.model_paths import ModelPathStore
from app.memory.tool.scoped_tool import ScopedMemoryTool
from tests.backends import THREAD, USER, Backend
from tests.memory.tool.helpers import refused

MINE = f"/memories/users/{USER}"


@pytest.mark.parametrize(
    "name",
    ["a" * 256, "\u00e9" * 128, "\U0001f680" * 64, "/".join(["\U0001f680" * 60] * 4)],
    ids=["256 letters", "128 two-byte letters", "64 emoji", "four names of 60 emoji"],
)
async def test_a_name_too_long_for_storage_is_an_error_result_naming_the_limit(
    backend: Backend, name: str
) -> None:
    scope = MemoryScope(user_id=USER, thread_ts=THREAD)
    tool = ScopedMemoryTool(ModelPathStore(backend.store, scope), scope)

    message = await refused(tool, {"command": "create", "path": f"{MINE}/{name}", "file_text": "x"})

    assert "is longer than" in message and "unavailable" not in message
    assert backend.raw_names() == []
