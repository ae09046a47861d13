"""The circuit breaker around the GCS store, and the storage deadline, against the emulator
behind a FaultyProxy: what reaches the bucket while it is down, and what opens the breaker."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.storage.breaker import PROBE_KEY, GuardedStore, StoreOffline
from app.storage.deadline import storage_deadline
from app.storage.gcs import GcsObjectStore
from app.storage.store import CREATE_ONLY, PreconditionFailed, StoreUnavailable, StoreUnreachable
from tests.fakes._waiting import wait_until_async
from tests.fakes.blackhole import Blackhole
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
    await wait_until_async(lambda: store.available, what="the probe closing it")
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
    # On its own the store would retry for 10 minutes; the person's deadline is 0.5 s.
    store = GcsObjectStore(gcs_bucket, retry_timeout=600.0, request_timeout=5.0)
    gcs_proxy.add_rule("", status=503)

    # A guard, not a measurement: uncut, the retries would outlast it tenfold.
    async with asyncio.timeout(60):
        with storage_deadline(0.5), pytest.raises(StoreUnavailable):
            await store.read(KEY)

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


# --- production's credentials, out of reach ---------------------------------------------------


def _credentials_from(monkeypatch: pytest.MonkeyPatch, home: Path, metadata_server: str) -> str:
    """Production's configuration (no emulator: Application Default Credentials), with
    no credentials configured and the metadata server at `metadata_server` (host:port);
    the bucket's endpoint is a blackhole nothing is ever sent to. A bucket name."""
    for name in ("STORAGE_EMULATOR_HOST", "GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GCE_METADATA_IP", metadata_server)
    monkeypatch.setenv("GCE_METADATA_HOST", metadata_server)
    return "orion-out-of-reach"


async def test_no_metadata_server_answering_is_an_outage_found_by_the_connect(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, refused_port: int
) -> None:
    with Blackhole() as endpoint:
        monkeypatch.setenv("API_ENDPOINT_OVERRIDE", endpoint.url)
        bucket = _credentials_from(monkeypatch, tmp_path, f"127.0.0.1:{refused_port}")
        store = _guarded(bucket)

        # Without credentials nothing can be sent: later events must not each try again.
        with pytest.raises(StoreUnreachable):
            await store.connect()
        assert not store.available
        with pytest.raises(StoreOffline):
            await store.read(KEY)
        await store.close()


async def test_an_operation_waits_for_a_connect_in_progress_no_longer_than_its_deadline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The metadata server takes every request and answers none: google-auth's credentials
    # lookup (several attempts of seconds each) holds the connect for its whole length.
    with Blackhole() as endpoint, FaultyProxy(endpoint.url) as metadata_server:
        hanging = metadata_server.add_rule("", delay=60)
        monkeypatch.setenv("API_ENDPOINT_OVERRIDE", endpoint.url)
        bucket = _credentials_from(monkeypatch, tmp_path, f"127.0.0.1:{metadata_server.port}")
        store = GcsObjectStore(bucket)
        connecting = asyncio.ensure_future(store.connect())
        await wait_until_async(lambda: hanging.hits, what="the credentials lookup")

        with storage_deadline(0.2), pytest.raises(TimeoutError):
            await store.read(KEY)  # no timeout of the caller's own: only the deadline

        assert not connecting.done(), "the read gave up while the connect went on"
        connecting.cancel()
        await store.close()
