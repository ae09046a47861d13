"""Recall over several homes (a channel and the other public channels), several parts, and
`keep` refusing some homes: what may be shown, counted and ranked."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from app.learning.recall import recall, search_homes
from app.learning.search_index import document_for, record_search_document
from app.learning.search_ranking import TimeRange
from app.memory.homes import Home, channel
from app.storage.store import ObjectStore
from tests.backends import USER
from tests.layout import conversation

HERE, GONE = "C0HERE0001", "C0GONE0001"
START = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


async def seed(store: ObjectStore, home: Home, threads: list[tuple[str, str, str, int]]) -> None:
    for thread, title, body, day in threads:
        updated = START + timedelta(days=day)
        await store.write(
            home.conversation_key(thread),
            conversation(USER, thread, summary=body, title=title, at=updated),
        )
        await record_search_document(store, home, document_for(thread, title, body, [], updated))


async def refuse_all(homes: list[Home]) -> set[Home]:
    return set()


def rendered(result: object) -> str:
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


async def call(store: ObjectStore, input: dict, message: str = "") -> str:
    async def homes() -> list[Home]:
        return [channel(HERE), channel(GONE)]

    return rendered(
        await recall(
            input,
            store,
            homes,
            exclude_thread=None,
            shown={},
            audited=("channel:" + HERE, USER),
            keep=refuse_all,
            among="in this channel and the public channels",
            message=message,
        )
    )


async def test_a_refused_homes_matches_are_not_counted_as_more_matched(store: ObjectStore) -> None:
    """A channel made private since: none of its threads is shown, and none is counted in
    the "N more matched" line either (that would tell a public channel that a private one
    holds N threads with these words)."""
    await seed(store, channel(HERE), [("1712000001.000001", "Kangaroo notes", "kangaroo", 1)])
    await seed(
        store,
        channel(GONE),
        [(f"17120001{n:02d}.000001", f"Kangaroo deal {n}", "kangaroo secret", n) for n in range(8)],
    )
    found = await call(store, {"queries": ["kangaroo"], "limit": 2})
    assert "Kangaroo notes" in found and "Kangaroo deal" not in found
    assert "more earlier conversation" not in found, found[:600]


async def test_the_persons_words_matching_a_refused_home_do_not_change_the_count(
    store: ObjectStore,
) -> None:
    """Only Claude's words are counted as matched: a refused home's threads found by the
    person's words are not subtracted from them either (HERE has 5 kangaroo threads, 2
    shown: 3 more)."""
    await seed(
        store,
        channel(HERE),
        [(f"17120000{n:02d}.000001", f"Kangaroo {n}", "kangaroo", n) for n in range(5)],
    )
    await seed(
        store,
        channel(GONE),
        [(f"17120001{n:02d}.000001", f"Wombat {n}", "wombat", n) for n in range(5)],
    )
    found = await call(store, {"queries": ["kangaroo"], "limit": 2}, message="wombat please")
    assert "Wombat" not in found
    assert "(3 more earlier conversation(s) matched" in found, found[:600]


async def test_the_current_thread_is_left_out_of_every_part_and_home(store: ObjectStore) -> None:
    current = "1712000001.000001"
    await seed(store, channel(HERE), [(current, "Kangaroo wombat now", "kangaroo wombat", 9)])
    await seed(store, channel(HERE), [("1712000002.000001", "Other", "kangaroo", 1)])
    hits, _ = await search_homes(
        store,
        [channel(HERE), channel(GONE)],
        ["kangaroo", "wombat", "now", ""],
        limit=10,
        exclude_thread=current,
        within=TimeRange(after=int(START.timestamp())),
        message="kangaroo wombat now",
    )
    assert current not in [h.thread_ts for h in hits]


async def allow_all(homes: list[Home]) -> set[Home]:
    return set(homes)


async def test_a_time_range_is_kept_when_several_homes_are_searched(store: ObjectStore) -> None:
    """One home: the thread held in the range comes first (in turn with the best of any
    time). Two homes (a public channel and another public one): the same, not sorted away
    by the out-of-range threads' higher scores."""
    old: list[tuple[str, str, str, int]] = [
        (f"17120000{n:02d}.000001", f"Kangaroo kangaroo {n}", "kangaroo kangaroo kangaroo", n)
        for n in range(5)
    ]
    await seed(store, channel(HERE), old)
    await seed(
        store,
        channel(HERE),
        [("1712000099.000001", "Minutes", "long minutes where kangaroo came up once " * 5, 60)],
    )
    elsewhere = [(f"17120002{n:02d}.000001", t, b, d) for n, (_, t, b, d) in enumerate(old)]
    await seed(store, channel(GONE), elsewhere)
    within = TimeRange(after=int((START + timedelta(days=50)).timestamp()))
    alone, _ = await search_homes(store, [channel(HERE)], ["kangaroo"], limit=3, within=within)
    assert alone[0].thread_ts == "1712000099.000001"
    both, _ = await search_homes(
        store, [channel(HERE), channel(GONE)], ["kangaroo"], limit=3, within=within, keep=allow_all
    )
    assert "1712000099.000001" in [hit.thread_ts for hit in both]
