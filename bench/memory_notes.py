"""The memory note's cost, against the GCS emulator: recording a turn's writes, keeping
the undo record, and an Undo.

Like with like, each in one run:

- a memory-tool `create` straight on the store, and the same through the turn's
  `RecordingStore` (what recording costs a write the model makes);
- `note_for_turn` after a turn that wrote 1 file and one that wrote 12: the person's switch
  and erasure check (read at once), the record's marker and the record, the erasure check
  again — four storage round trips in a row after the answer, whatever the count;
- `undo_changes` for those two records: the record, the erasure check, every file's
  current generation (at once), the claim, every file put back (at once), the erasure
  check — six round trips in a row.

Loopback hides network latency: in Cloud Run add a GCS round trip (≈ 20–50 ms) per step
named above. Run alone with `uv run python -m bench.memory_notes [--quick]`.
"""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial

from app.agent.memory_notes import NoteRequest, note_for_turn
from app.learning.guard import Guard
from app.learning.undo import UndoOutcome, undo_changes
from app.memory.change_log import ChangeLog, RecordingStore
from app.memory.homes import person
from app.memory.scopes import MemoryScope
from app.memory.tool.model_paths import ModelPathStore
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.storage.gcs import GcsObjectStore
from app.storage.store import ObjectStore
from bench.environment import benchmark_environment
from bench.stats import median_ms, percentile_ms, print_table
from tests.fakes.gcs import GcsEmulator

USER, THREAD = "U0BENCH05", "1712345678.000500"
PLAIN_USER, RECORDED_USER = "U0BENCH06", "U0BENCH07"
TEXT = "Prefers concise answers with examples.\n" * 10


def _stats(label: str, seconds: list[float]) -> list[tuple[str, str]]:
    return [
        (f"{label}, median ms", str(median_ms(seconds))),
        (f"{label}, p95 ms", str(percentile_ms(seconds, 95))),
        (f"{label}, p99 ms", str(percentile_ms(seconds, 99))),
    ]


async def _timed(call: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await call()
    return time.perf_counter() - started


def _tool(store: ObjectStore, user: str) -> ScopedMemoryTool:
    """The memory tool as a turn has it: the model's paths mapped into the person's home."""
    scope = MemoryScope(user, THREAD)
    return ScopedMemoryTool(ModelPathStore(store, scope), scope)


async def _turn(store: ObjectStore, sample: int, files: int) -> ChangeLog:
    """A turn that created `files` files, recorded."""
    log = ChangeLog()
    tool = _tool(RecordingStore(store, log), USER)
    for n in range(files):
        path = f"/memories/users/{USER}/s{sample}/f{files}-{n:02}.md"
        await tool.call({"command": "create", "path": path, "file_text": TEXT})
    return log


async def _measure(store: ObjectStore, samples: int) -> list[tuple[str, str]]:
    # One person each (a memory directory holds at most 200 files).
    plain = _tool(store, PLAIN_USER)
    plain_creates, recorded_creates = [], []
    for n in range(samples):
        path = f"/memories/users/{PLAIN_USER}/{n:03}.md"
        create = {"command": "create", "path": path, "file_text": TEXT}
        plain_creates.append(await _timed(partial(plain.call, create)))
        recording = _tool(RecordingStore(store, ChangeLog()), RECORDED_USER)
        create = {**create, "path": f"/memories/users/{RECORDED_USER}/{n:03}.md"}
        recorded_creates.append(await _timed(partial(recording.call, create)))
    rows = [
        *_stats("memory create, plain store (GCS emulator)", plain_creates),
        *_stats("memory create, recorded for the note (GCS emulator)", recorded_creates),
    ]
    for files in (1, 12):
        notes, undos = [], []
        for sample in range(samples):
            guard = await Guard.reading(store, person(USER))  # read as the turn began
            log = await _turn(store, sample, files)
            request = NoteRequest(USER, THREAD, datetime.now(UTC), guard)
            started = time.perf_counter()
            note = await note_for_turn(request, log, shown_by_default=True, budget_s=10)
            notes.append(time.perf_counter() - started)
            assert note is not None and note.undo_id is not None
            started = time.perf_counter()
            result = await undo_changes(store, note.undo_id, USER)
            undos.append(time.perf_counter() - started)
            assert result.outcome is UndoOutcome.UNDONE
        rows += _stats(f"note kept after a turn that wrote {files} file(s)", notes)
        rows += _stats(f"undo of {files} file(s)", undos)
    return rows


def run(quick: bool) -> list[tuple[str, str]]:
    samples = 20 if quick else 100
    with GcsEmulator() as emulator, benchmark_environment(emulator.url):
        bucket = f"orion-bench-{uuid.uuid4().hex[:12]}"
        emulator.create_bucket(bucket)

        async def measure() -> list[tuple[str, str]]:
            store = GcsObjectStore(bucket)
            await store.connect()
            try:
                return await _measure(store, samples)
            finally:
                await store.close()

        rows = asyncio.run(measure())
    return [(f"(memory notes: {samples} samples each, loopback emulator)", ""), *rows]


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
