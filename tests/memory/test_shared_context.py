"""SharedContextCache over the GCS emulator: what it shares, what it never keeps."""

from __future__ import annotations

import asyncio

import pytest

from app.memory import shared_context
from app.memory.homes import preferences_key
from app.memory.scopes import global_context_key
from app.memory.shared_context import SharedContextCache
from app.storage.gcs import GcsObjectStore
from app.storage.store import StoreUnavailable
from tests.backends import USER
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator

GLOBAL = global_context_key()


def _downloads(proxy: FaultyProxy, quoted_key: str) -> int:
    return sum(r.method == "GET" and quoted_key in r.path_qs for r in proxy.requests)


def test_reads_under_way_are_joined_and_the_answer_is_kept_for_its_age(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    gcs_emulator.write(gcs_bucket, GLOBAL, "Ships on Thursdays.")
    gcs_proxy.add_rule("", delay=0.2)

    async def scenario() -> list[str | None]:
        shared = SharedContextCache(GcsObjectStore(gcs_bucket), max_age_s=60)
        together = await asyncio.gather(*(shared.read(GLOBAL) for _ in range(10)))
        later = await shared.read(GLOBAL)
        return [stored.content if stored else None for stored in [*together, later]]

    assert asyncio.run(scenario()) == ["Ships on Thursdays."] * 11
    assert _downloads(gcs_proxy, "global%2Fcontext.md") == 1


def test_what_a_person_owns_is_read_afresh_every_time(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    key = preferences_key(USER)
    gcs_emulator.write(gcs_bucket, key, '{"name": "Ines"}')

    async def scenario() -> str | None:
        shared = SharedContextCache(GcsObjectStore(gcs_bucket), max_age_s=60)
        await shared.read(key)
        gcs_emulator.delete(gcs_bucket, key)  # erased, by another instance say
        return await shared.read(key) and "still there"

    assert asyncio.run(scenario()) is None
    assert _downloads(gcs_proxy, "preferences.json") == 2


def test_a_failed_read_is_not_kept(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    gcs_emulator.write(gcs_bucket, GLOBAL, "Ships on Thursdays.")
    gcs_proxy.add_rule("global", status=403, times=1)  # an error answer: not retried

    async def scenario() -> str | None:
        shared = SharedContextCache(GcsObjectStore(gcs_bucket), max_age_s=60)
        with pytest.raises(StoreUnavailable):
            await shared.read(GLOBAL)
        stored = await shared.read(GLOBAL)
        return stored.content if stored else None

    assert asyncio.run(scenario()) == "Ships on Thursdays."


def test_a_write_through_it_drops_the_kept_copy(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    gcs_emulator.write(gcs_bucket, GLOBAL, "Ships on Thursdays.")

    async def scenario() -> str | None:
        shared = SharedContextCache(GcsObjectStore(gcs_bucket), max_age_s=60)
        await shared.read(GLOBAL)
        await shared.write(GLOBAL, "Ships on Tuesdays.")
        stored = await shared.read(GLOBAL)
        return stored.content if stored else None

    assert asyncio.run(scenario()) == "Ships on Tuesdays."


def test_a_flood_of_paths_nobody_wrote_keeps_a_bounded_number_of_copies(
    gcs_proxy: FaultyProxy,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Claude (or a person through it) can view any path under /memories/global/: each
    miss is kept for its age, but never more than MAX_KEPT copies, the oldest going first."""
    monkeypatch.setattr(shared_context, "MAX_KEPT", 8)
    gcs_emulator.write(gcs_bucket, GLOBAL, "Ships on Thursdays.")

    async def scenario() -> str | None:
        shared = SharedContextCache(GcsObjectStore(gcs_bucket), max_age_s=60)
        await shared.read(GLOBAL)
        for n in range(50):
            await shared.read(f"global/missing-{n}.md")
            await shared.read(GLOBAL)  # still in use: kept
        await shared.read("global/missing-0.md")  # long gone from the copies: read again
        await shared.read("global/missing-49.md")  # among the last: still kept
        stored = await shared.read(GLOBAL)
        return stored.content if stored else None

    assert asyncio.run(scenario()) == "Ships on Thursdays."
    assert _downloads(gcs_proxy, "global%2Fcontext.md") == 1
    assert _downloads(gcs_proxy, "global%2Fmissing-0.md") == 2
    assert _downloads(gcs_proxy, "global%2Fmissing-49.md") == 1
