"""One memory-tool call cannot flood the bucket: a rename or delete of a directory touches
at most MAX_FILES_PER_CALL files, MAX_IN_FLIGHT requests at a time, and a larger one is an
error result to the model.

Before, renaming a full directory (200 files of 100 KB) sent every file's read, copy and
delete at once: two such calls made 1,206 requests and moved 39 MiB, 200 in flight at
once, on the storage every conversation shares. Measured here as the bucket sees it: every
request through the fault proxy in front of the GCS emulator, each held 20 ms so that
requests sent together overlap.
"""

from __future__ import annotations

import pytest
from anthropic.tools import ToolError

from app.memory.homes import person
from app.memory.scopes import MemoryScope
from app.memory.tool.model_paths import ModelPathStore
from app.memory.tool.moving import MAX_FILES_PER_CALL, MAX_IN_FLIGHT
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.storage.gcs import GcsObjectStore
from tests.e2e.memory_bucket import Bucket
from tests.fakes.fault_proxy import FaultyProxy, ProxiedRequest
from tests.fakes.gcs import GcsEmulator

USER, THREAD = "U0FANOUT1", "1712345678.123456"
OWN = f"users/{USER}/"  # as the model names the person's memory
STORED = person(USER).memory_prefix  # where it lives
NOTE = "x" * 100 * 1024  # a memory file at its size limit


def peak_in_flight(requests: list[ProxiedRequest]) -> int:
    edges = sorted(
        [(r.started, 1) for r in requests] + [(r.finished, -1) for r in requests],
        key=lambda edge: (edge[0], edge[1]),
    )
    peak = current = 0
    for _, step in edges:
        current += step
        peak = max(peak, current)
    return peak


@pytest.fixture
def tool(gcs_proxy: FaultyProxy, gcs_bucket: str) -> ScopedMemoryTool:
    gcs_proxy.add_rule("", delay=0.02)
    scope = MemoryScope(user_id=USER, thread_ts=THREAD)
    return ScopedMemoryTool(ModelPathStore(GcsObjectStore(gcs_bucket), scope), scope)


def seed(gcs_emulator: GcsEmulator, gcs_bucket: str, directory: str, files: int) -> Bucket:
    bucket = Bucket(gcs_emulator, gcs_bucket)
    for n in range(files):
        bucket.write(f"{STORED}{directory}/{n:03d}.md", NOTE)
    return bucket


@pytest.mark.parametrize("command", ["rename", "delete"])
async def test_a_directory_over_the_bound_is_an_error_result_and_touches_no_file(
    tool: ScopedMemoryTool,
    gcs_proxy: FaultyProxy,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
    command: str,
) -> None:
    bucket = seed(gcs_emulator, gcs_bucket, "big", MAX_FILES_PER_CALL + 50)
    before = bucket.names()
    path = f"/memories/{OWN}big"
    call = (
        {"command": "rename", "old_path": path, "new_path": f"/memories/{OWN}moved"}
        if command == "rename"
        else {"command": "delete", "path": path}
    )

    with pytest.raises(ToolError) as refused:
        await tool.call(call)

    assert f"at most {MAX_FILES_PER_CALL}" in str(refused.value.content)
    assert bucket.names() == before
    assert len(gcs_proxy.requests) <= 4, "a lookup and a listing or two, no file touched"


async def test_a_directory_at_the_bound_moves_a_few_requests_at_a_time(
    tool: ScopedMemoryTool, gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    bucket = seed(gcs_emulator, gcs_bucket, "notes", MAX_FILES_PER_CALL)

    result = await tool.call(
        {
            "command": "rename",
            "old_path": f"/memories/{OWN}notes",
            "new_path": f"/memories/{OWN}archive",
        }
    )

    assert result == f"Successfully renamed /memories/{OWN}notes to /memories/{OWN}archive"
    assert len([n for n in bucket.names() if n.startswith(f"{STORED}archive/")]) == 100
    requests = gcs_proxy.requests
    # Per file a read, a create-only copy and a conditional delete; before them a lookup
    # and the listings.
    assert len(requests) <= 3 * MAX_FILES_PER_CALL + 4
    assert peak_in_flight(requests) <= MAX_IN_FLIGHT
