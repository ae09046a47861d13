"""GCS backend specifics: retries through a faulty proxy, content types, lazy import, and
the two places Orion reaches past google-cloud-storage's public API."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from google.auth.credentials import Credentials
from google.auth.exceptions import RefreshError

from app.storage import gcs as gcs_store
from app.storage.deadline import storage_deadline
from app.storage.gcs import GcsObjectStore
from app.storage.gcs_connection import STORAGE_WORKERS
from app.storage.store import (
    CREATE_ONLY,
    UNCHANGED,
    PreconditionFailed,
    StoredObject,
    StoreError,
    StoreUnavailable,
    StoreUnreachable,
    read_if_changed,
)
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator

KEY = "users/U0123ABCD/notes.md"
UPLOAD = "uploadType=multipart"


def _object_statuses(proxy: FaultyProxy) -> list[int]:
    """Statuses of object requests, in order (not of any bucket request the library makes
    for itself)."""
    paths = [(r.path_qs.split("?")[0], r.status) for r in proxy.requests]
    return [status for path, status in paths if "/o/" in path or path.endswith("/o")]


def _store(
    bucket: str, *, retry_timeout: float = 5.0, request_timeout: float = 2.0
) -> GcsObjectStore:
    return GcsObjectStore(bucket, retry_timeout=retry_timeout, request_timeout=request_timeout)


async def test_read_succeeds_after_two_503s(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    gcs_emulator.write(gcs_bucket, KEY, "remembered")
    gcs_proxy.add_rule(KEY, status=503, times=2)

    stored = await _store(gcs_bucket).read(KEY)

    assert stored is not None and stored.content == "remembered"
    # 206: a read asks for at most the cap and a byte (gcs_connection.MAX_DOWNLOAD_BYTES).
    assert _object_statuses(gcs_proxy) == [503, 503, 206]


async def test_conditional_write_succeeds_after_two_503s(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    gcs_proxy.add_rule(UPLOAD, status=503, times=2, method="POST")

    generation = await _store(gcs_bucket).write(KEY, "v1", if_generation=CREATE_ONLY)

    assert generation > 0
    assert gcs_emulator.read(gcs_bucket, KEY) == b"v1"
    assert _object_statuses(gcs_proxy) == [503, 503, 200]


async def test_unconditional_write_is_not_retried(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    # Retrying a blind overwrite could clobber a newer write: the library's rule.
    gcs_proxy.add_rule(UPLOAD, status=503, times=1, method="POST")

    with pytest.raises(StoreUnavailable):
        await _store(gcs_bucket).write(KEY, "v1")

    assert _object_statuses(gcs_proxy) == [503]
    assert gcs_emulator.read(gcs_bucket, KEY) is None


async def test_persistent_503_raises_store_unavailable_within_the_retry_budget(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    gcs_proxy.add_rule(f"/b/{gcs_bucket}/o", status=503)
    store = _store(gcs_bucket, retry_timeout=1.0, request_timeout=1.0)

    # A guard, not a measurement: the library's own retries would go on for 120 s a call.
    async with asyncio.timeout(60):
        for call in (
            lambda: store.read(KEY),
            lambda: store.write(KEY, "x", if_generation=CREATE_ONLY),
            lambda: store.list("users/"),
        ):
            with pytest.raises(StoreUnavailable, match="still failing when its retries ran out"):
                await call()

    assert len(_object_statuses(gcs_proxy)) > 3  # it did retry


async def test_slow_responses_time_out_into_store_unavailable(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    gcs_emulator.write(gcs_bucket, KEY, "slow")
    stall = gcs_proxy.add_rule(KEY, hold=True)  # no answer until the test says
    store = _store(gcs_bucket, retry_timeout=0.5, request_timeout=0.3)

    with pytest.raises(StoreUnavailable):
        await store.read(KEY)

    assert stall.hits >= 1 and gcs_proxy.requests == [], "it gave up while still unanswered"
    stall.release()


async def test_a_read_its_deadline_cuts_short_is_a_timeout_not_an_outage(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    gcs_emulator.write(gcs_bucket, KEY, "slow")
    stall = gcs_proxy.add_rule(KEY, hold=True)
    store = _store(gcs_bucket)
    await store.connect()

    with storage_deadline(0.3), pytest.raises(TimeoutError) as raised:
        await store.read(KEY)

    # The caller's time ran out (a memory load counts it as timed out), GCS is not down.
    assert isinstance(raised.value, StoreUnavailable)
    assert not isinstance(raised.value, StoreUnreachable)
    assert stall.hits >= 1
    stall.release()


async def test_a_412_caused_by_our_own_landed_attempt_is_not_a_conflict(
    gcs_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # When a conditional upload lands but its response is lost, the library's retry meets
    # a generation it did not expect (412). That 412 is our own write, not a conflict: the
    # store must say so, or `update` would apply the same edit twice. Replay that retry by
    # sending the same write (same write id) twice.
    monkeypatch.setattr(gcs_store, "_new_write_id", lambda: "attempt-1")
    store = GcsObjectStore(gcs_bucket)
    landed = await store.write(KEY, "appended once", if_generation=CREATE_ONLY)

    replayed = await store.write(KEY, "appended once", if_generation=CREATE_ONLY)

    assert replayed == landed
    monkeypatch.setattr(gcs_store, "_new_write_id", lambda: "another-writer")
    with pytest.raises(PreconditionFailed):
        await store.write(KEY, "appended twice", if_generation=CREATE_ONLY)
    stored = await store.read(KEY)
    assert stored is not None and stored.content == "appended once"


async def test_writes_set_a_content_type_by_extension(
    gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    store = GcsObjectStore(gcs_bucket)
    expected = {
        "users/U0123ABCD/notes.md": "text/markdown",
        "users/U0123ABCD/preferences.json": "application/json",
        "users/U0123ABCD/todo.txt": "text/plain",
    }
    for key in expected:
        await store.write(key, "{}")

    for key, content_type in expected.items():
        url = f"{gcs_emulator.url}/storage/v1/b/{gcs_bucket}/o/{quote(key, safe='')}"
        metadata = await asyncio.to_thread(_get_json, url)
        assert metadata["contentType"].split(";")[0] == content_type


def _get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return dict(json.load(response))


def test_importing_the_memory_package_does_not_load_google_cloud_storage_or_anthropic() -> None:
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "import app.memory, app.storage.store, app.memory.scopes, app.memory.tool.guide\n"
        "from app.config import StorageSettings\n"
        "from app.services import build_storage\n"
        "build_storage(StorageSettings(_env_file=None, gcs_memories_bucket='orion-memories'))\n"
        "build_storage(StorageSettings(_env_file=None, gcs_memories_bucket=None, "
        "memory_dir=Path('unused')))\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('google', 'anthropic')))\n"
        "print(loaded)\n"
    )
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


async def test_a_proxy_named_in_the_environment_is_still_used(
    gcs_emulator: GcsEmulator, gcs_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The store looks the proxy variables up once rather than on every request; a forward
    # proxy set in the environment must still carry every request.
    with FaultyProxy(gcs_emulator.url) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        for name in ("NO_PROXY", "no_proxy", "http_proxy"):
            monkeypatch.delenv(name, raising=False)
        store = _store(gcs_bucket)
        await store.write(KEY, "through the proxy")
        stored = await store.read(KEY)

    assert stored is not None and stored.content == "through the proxy"
    assert _object_statuses(proxy) == [200, 206]  # the write, the read


# --- the one private name of google-cloud-storage Orion relies on (app/storage) ----------


async def test_the_library_still_has_a_requests_session_to_tune(gcs_bucket: str) -> None:
    from google.cloud import storage

    from app.storage.gcs_connection import requests_session

    client = storage.Client()
    await GcsObjectStore(gcs_bucket, client=client).connect()  # sizes the client's pool
    session = requests_session(client)
    assert session is not None, (
        "google-cloud-storage's Client no longer has its requests session at `_http`: "
        "app/storage/gcs_connection.py requests_session needs another way to size the pool"
    )
    pools = [a.poolmanager.connection_pool_kw.get("maxsize") for a in session.adapters.values()]
    assert gcs_store.STORAGE_WORKERS in pools


async def test_a_read_keeps_the_time_of_the_content_it_read(
    gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    # Retention (app/memory/retention.py) ages conversations by this time; one request
    # brings both (app/storage/gcs_connection.py, the Blob that keeps Last-Modified).
    store = _store(gcs_bucket)
    await store.write(KEY, "remembered")
    [listed] = await store.list(KEY)

    stored = await store.read(KEY)

    assert stored is not None and stored.generation == listed.generation
    assert abs((stored.updated - listed.updated).total_seconds()) < 1.5, (
        "google-cloud-storage no longer calls Blob._extract_headers_from_download with the "
        "download's response: app/storage/gcs_connection.py needs another way to keep an "
        "object's Last-Modified (without it every object reads as written just now)"
    )


class _UnrefreshableToken(Credentials):
    """google-auth credentials whose token server refuses (a revoked service account)."""

    def refresh(self, request: Any) -> None:
        raise RefreshError("the token server said no")


async def test_a_token_that_cannot_be_refreshed_is_a_store_failure_not_a_crash(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    store = GcsObjectStore(gcs_bucket, credentials=_UnrefreshableToken())

    with pytest.raises(StoreUnavailable):
        await store.read(KEY)
    with pytest.raises(StoreUnavailable):
        await store.write(KEY, "x", if_generation=CREATE_ONLY)

    assert _object_statuses(gcs_proxy) == []  # nothing went out unauthenticated


async def test_an_object_too_large_to_read_is_refused_once_not_read_into_memory(
    gcs_proxy: FaultyProxy,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planted by someone with write access to the bucket: a store failure (each reader
    already treats one as "could not read"), not retried, not held in the instance."""
    monkeypatch.setattr(gcs_store, "MAX_DOWNLOAD_BYTES", 1024)
    gcs_emulator.write(gcs_bucket, KEY, "x" * 2048)

    with pytest.raises(StoreError) as raised:
        await _store(gcs_bucket).read(KEY)

    assert not isinstance(raised.value, StoreUnavailable), "not the store being down"
    assert _object_statuses(gcs_proxy) == [206], "asked once, for at most the cap and a byte"


async def test_one_store_serves_event_loops_one_after_another(
    gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    # `orion memory …` and the terminal chat run their own loops; a session is per loop.
    store = GcsObjectStore(gcs_bucket)
    await store.write(KEY, "first loop")

    def in_a_new_loop() -> str | None:
        async def read() -> str | None:
            stored = await store.read(KEY)
            return stored.content if stored else None

        return asyncio.run(read())

    assert await asyncio.to_thread(in_a_new_loop) == "first loop"
    stored = await store.read(KEY)
    assert stored is not None and stored.content == "first loop"


async def test_an_unchanged_object_is_asked_after_not_sent_again(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    """A conditional read names the generation the caller has; GCS answers 304 while the
    object is still at it (the emulator ignores the condition: the proxy answers as GCS
    does), and the content once it has changed."""
    store = _store(gcs_bucket)
    first = await store.write(KEY, "the index as this instance has it")
    gcs_proxy.add_rule("ifGenerationNotMatch", status=304, times=1)

    assert await read_if_changed(store, KEY, first) is UNCHANGED
    assert f"ifGenerationNotMatch={first}" in gcs_proxy.requests[-1].path_qs

    second = await store.write(KEY, "rewritten by another instance")
    stored = await read_if_changed(store, KEY, first)
    assert isinstance(stored, StoredObject)
    assert (stored.content, stored.generation) == ("rewritten by another instance", second)
    # A server that sends the content all the same (the emulator): still unchanged.
    assert await read_if_changed(store, KEY, second) is UNCHANGED
    await store.delete(KEY)
    assert await read_if_changed(store, KEY, second) is None
    await store.close()


async def test_connecting_starts_every_worker_thread_before_any_request(
    gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    # Started on demand, a fresh process's first burst started them one by one on the
    # event loop, each waiting for the GIL (docs/benchmarks.md, "Bursts"): Orion connects
    # before /readyz, so a first burst finds them all waiting.
    def workers() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name.startswith("gcs")}

    before = workers()
    store = _store(gcs_bucket)
    await store.connect()

    assert len(workers() - before) == STORAGE_WORKERS
    gcs_emulator.write(gcs_bucket, KEY, "ready")
    await asyncio.gather(*(store.read(KEY) for _ in range(STORAGE_WORKERS)))
    assert len(workers() - before) == STORAGE_WORKERS, "a burst starts no thread"
    await store.close()


async def test_connecting_again_while_requests_run_holds_no_worker_from_them(
    gcs_proxy: FaultyProxy, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    # Starting the workers holds each until all have started: done once, at start-up, never
    # again while they serve (all busy, the barrier would keep the requests waiting).
    gcs_emulator.write(gcs_bucket, KEY, "held")
    store = _store(gcs_bucket)
    await store.connect()
    stall = gcs_proxy.add_rule(KEY, hold=True)
    # Every worker but one held by a request (connecting itself needs one).
    held = [asyncio.ensure_future(store.read(KEY)) for _ in range(STORAGE_WORKERS - 1)]
    await asyncio.sleep(0.2)

    await asyncio.wait_for(store.connect(), timeout=5)

    stall.release()
    assert all(r is not None for r in await asyncio.gather(*held))
    await store.close()
