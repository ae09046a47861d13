"""Where a turn's first `recall` search spends its CPU at 2,000 conversations (issue 45).

One person of the passages set (bench/recall_passages_data.py) with bench.recall_hard's
long history, seeded as turn ends write it (each conversation's object, the profile, the
0.9 MB search index) in the GCS emulator. Each of their questions, three times, as a
turn's first search after another instance's turn end (the index downloaded and parsed,
five conversations read). Every step runs on this thread — the storage client's calls,
and what recall hands to worker threads — so that `time.thread_time()` counts each apart:
the storage client's requests (the index; the conversations; and, before the search,
the turn's guard reading the profile), parsing the index, ranking, the conversations
parsed, their passages, the result. Then the decoding of the index's bytes alone.

Run alone with `uv run python -m bench.recall_first_search` (not in bench.run).
"""

from __future__ import annotations

import asyncio
import functools
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from typing import Any
from unittest import mock

from app.learning import recall, search_index
from app.learning.conversation_record import ConversationRecord
from app.memory import secret_free_store
from app.memory.homes import person as home_of
from app.memory.retention import SessionRetention
from app.storage.deadline import current_deadline
from app.storage.gcs import GcsObjectStore
from bench.environment import benchmark_environment
from bench.recall_hard import RETENTION_DAYS, CountingStore, _seed
from bench.recall_hard_data import Person, long_history
from bench.recall_passages import LONG_HISTORY, _turn, people, query_input
from bench.stats import percentile_ms, print_table
from tests.fakes.gcs import GcsEmulator

ROUNDS = 3
spent: defaultdict[str, float] = defaultdict(float)


def _timed(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.thread_time()
        try:
            return func(*args, **kwargs)
        finally:
            spent[name] += time.thread_time() - started

    return timed


async def _here(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return func(*args, **kwargs)


async def _storage_here(
    self: GcsObjectStore, operation: str, key: str, func: Callable[..., Any], *args: Any
) -> Any:
    what = {"search.json": "the index", "profile.json": "the profile (the turn's guard)"}.get(
        key.rsplit("/", 1)[-1], "the conversations"
    )
    started = time.thread_time()
    try:
        return self._translated(operation, key, current_deadline(), func, *args)
    finally:
        spent[f"the storage client: {what}"] += time.thread_time() - started


async def _measure(emulator: GcsEmulator, bucket: str) -> list[tuple[str, str]]:
    gcs = GcsObjectStore(bucket)
    store = CountingStore(secret_free_store.kept(gcs, SessionRetention(days=RETENTION_DAYS)))
    await gcs.connect()
    person, questions = people()[0]
    own = {c.thread_ts for c in person.conversations}
    extra = [c for c in long_history(LONG_HISTORY).conversations if c.thread_ts not in own]
    conversations = person.conversations + extra[: LONG_HISTORY - len(own)]
    long = Person(f"{person.user_id}F", person.language, conversations, [])
    size = _seed(emulator, bucket, long)
    steps = [
        mock.patch("asyncio.to_thread", _here),
        mock.patch.object(GcsObjectStore, "_run", _storage_here),
        mock.patch.object(
            search_index,
            "parse_search_index",
            _timed("parsing the index", search_index.parse_search_index),
        ),
        mock.patch.object(recall, "rank_parts", _timed("ranking", recall.rank_parts)),
        mock.patch.object(recall, "passages", _timed("passages", recall.passages)),
        mock.patch.object(
            ConversationRecord,
            "parse",
            _timed("conversations parsed", ConversationRecord.parse),
        ),
        mock.patch.object(recall, "render_hits", _timed("the result", recall.render_hits)),
    ]
    cpu, reads = [], []
    for step in steps:
        step.start()
    try:
        # A warm-up search (imports, the client's first connection), not counted.
        await (await _turn(store, long.user_id)).call(query_input(questions[0].text))
        spent.clear()
        for _ in range(ROUNDS):
            for asked in questions:
                search_index._parsed_kept.clear()
                tool = await _turn(store, long.user_id, asked.text)
                before, started = store.reads, time.thread_time()
                await tool.call(query_input(asked.text))
                cpu.append(time.thread_time() - started)
                reads.append(store.reads - before)
    finally:
        for step in reversed(steps):
            step.stop()
    stored = await gcs.read(home_of(long.user_id).search_key)
    await gcs.close()
    assert stored is not None
    raw = stored.content.encode()
    started = time.thread_time()
    for _ in range(100):
        raw.decode("utf-8", errors="replace")
    decode = (time.thread_time() - started) / 100
    searches = len(cpu)
    label = f"a turn's first search, {LONG_HISTORY:,} conversations ({searches} searches)"
    rows = [
        (
            f"{label}: CPU p50 / p95 ms; storage reads max",
            f"{percentile_ms(cpu, 50)} / {percentile_ms(cpu, 95)}; {max(reads)}",
        )
    ]
    rows += [
        (f"{label}: {name}, ms a search", f"{total / searches * 1000:.2f}")
        for name, total in sorted(spent.items(), key=lambda item: -item[1])
    ]
    rows.append(
        (
            f"the index's bytes decoded ({size / 1e6:.2f} MB, ASCII {raw.isascii()}), ms",
            f"{decode * 1000:.3f}",
        )
    )
    return rows


def run(quick: bool = False) -> list[tuple[str, str]]:
    del quick
    with GcsEmulator() as emulator, benchmark_environment(emulator.url):
        bucket = f"orion-bench-{uuid.uuid4().hex[:12]}"
        emulator.create_bucket(bucket)
        return asyncio.run(_measure(emulator, bucket))


if __name__ == "__main__":
    print_table(run())
