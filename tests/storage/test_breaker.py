"""The circuit breaker around the GCS store, and the storage deadline, against the emulator
behind a FaultyProxy: what reaches the bucket while it is down, and what opens the breaker."""

from __future__ import annotations

import asyncio
import time

import pytest

from app.storage.breaker import PROBE_KEY, GuardedStore, StoreOffline
from app.storage.deadline import storage_deadline
from app.storage.gcs import GcsObjectStore
from app.storage.store import CREATE_ONLY, PreconditionFailed, StoreUnavailable
from tests.fakes._waiting import wait_until_async
from tests.fakes.fault_proxy import FaultyProxy, ProxiedRequest
from tests.fakes.gcs import GcsEmulator

KEY = "users/U0BREAK/notes.md"
OTHER = "users/U0BREAK/preferences.json"


def _guarded(bucket: str) -> GuardedStore:
    # Short retries, so a failing call gives up quickly; a fast first probe.
    return GuardedStore(
        GcsObjectStore(bucket, retry_timeout=0.5, request_timeout=1.0), first_probe_s=0.05
    )


def _not_probes(proxy: FaultyProxy) -> list[ProxiedRequest]:
    probe = PROBE_KEY.replace("/", "%2F")
    return [r for r in proxy.requests if probe not in r.path_qs]


async def test_an_outage_opens_it_later_calls_send_nothing_and_a_probe_closes_it(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    gcs_emulator.write(gcs_bucket, KEY, "remembered")
    store = _guarded(gcs_bucket)
    gcs_proxy.add_rule("", status=503)

    with pytest.raises(StoreUnavailable):
        await store.read(KEY)
    assert not store.available
    sent = len(_not_probes(gcs_proxy))
    for call in (store.read(KEY), store.write(KEY, "x"), store.list("users/"), store.delete(KEY)):
        with pytest.raises(StoreOffline):
            await call
    assert len(_not_probes(gcs_proxy)) == sent, "nothing was sent while it was open"

    gcs_proxy.clear_rules()
    await wait_until_async(lambda: store.available, timeout=10, what="the probe closing it")
    stored = await store.read(KEY)
    assert stored is not None and stored.content == "remembered"
    await store.close()


async def test_one_failing_object_while_others_answer_does_not_open_it(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    gcs_emulator.write(gcs_bucket, OTHER, "{}")
    store = _guarded(gcs_bucket)
    broken = gcs_proxy.add_rule("notes.md", status=503)

    failing = asyncio.ensure_future(store.read(KEY))
    await wait_until_async(lambda: broken.hits, what="the broken object's first request")
    assert await store.read(OTHER) is not None  # answered after the failing read was sent
    with pytest.raises(StoreUnavailable):
        await failing

    assert store.available, "a store that answers is not down"
    await store.close()


async def test_a_refused_conditional_write_is_an_answer(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    gcs_emulator.write(gcs_bucket, KEY, "taken")
    store = _guarded(gcs_bucket)

    with pytest.raises(PreconditionFailed):
        await store.write(KEY, "mine", if_generation=CREATE_ONLY)

    assert store.available
    await store.close()


async def test_the_storage_deadline_cuts_the_librarys_retries_short(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    # On its own the store would retry for 10 s; the person's deadline is 0.5 s.
    store = GcsObjectStore(gcs_bucket, retry_timeout=10.0, request_timeout=5.0)
    gcs_proxy.add_rule("", status=503)

    started = time.monotonic()
    with storage_deadline(0.5), pytest.raises(StoreUnavailable):
        await store.read(KEY)

    assert time.monotonic() - started < 5.0, "gave up near the deadline, not after 10 s"
    assert len(gcs_proxy.requests) >= 2, "it still retried within the deadline"
    await store.close()


async def test_an_error_answer_is_this_calls_failure_not_an_outage(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    store = _guarded(gcs_bucket)
    gcs_proxy.add_rule("", status=403)  # e.g. a permission missing for one kind of call

    with pytest.raises(StoreUnavailable) as raised:
        await store.read(KEY)

    assert not isinstance(raised.value, StoreOffline)
    assert store.available, "the bucket answered; it is not down"
    await store.close()
