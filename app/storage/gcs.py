"""Objects in a Google Cloud Storage bucket (memories and Orion's own records alike).

google-cloud-storage is synchronous, so every call runs in a worker thread. It is also
slow to import (about a second), and Orion must acknowledge Slack's first event within
3 s: the library is imported when the first memory operation builds the client, never at
module import.

The calls run in the store's own thread pool, sized for Cloud Run's request concurrency
(40 requests at once, each needing several storage round trips at the same time), with an
HTTP connection pool of the same size. asyncio's default pool (6 threads on 2 cores) is
shared with every other `to_thread` and would queue a burst's reads one batch after
another.

Transient failures (429, 5xx, timeouts, dropped connections) are retried by the library
itself with google-api-core's exponential back-off, bounded by `retry_timeout`; each HTTP
request is bounded by `request_timeout`. On a person's path both are cut to what is left
of the caller's storage deadline (app/storage/deadline.py), so no retry loop outlives the
person's wait. Uploads are retried only when they carry `if_generation_match` (the
library's `ConditionalRetryPolicy`): retrying an unconditional upload could silently
overwrite a newer write. When retries give up the store raises `StoreUnavailable`.

With `STORAGE_EMULATOR_HOST` set the library itself points at the emulator and uses
anonymous credentials and no project; in production it uses Application Default
Credentials (the Cloud Run service account).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from app.storage.deadline import current_deadline
from app.storage.store import (
    ObjectInfo,
    PreconditionFailed,
    StoredObject,
    StoreUnavailable,
    StoreUnreachable,
)

if TYPE_CHECKING:
    from google.cloud.storage import Bucket, Client

T = TypeVar("T")

# Cloud Run's --concurrency (40) times the storage round trips one event makes at once
# (a claim beside three memory reads: 160), with room for the thread-context saves and
# after-turn writes still running. Idle threads cost a little memory; a queued read costs
# the person a round trip. With 64 threads, 40 thread starts at L = 0.2 s took a p95 of
# 4.9 L (bench/storage_trouble.py); with 256, 3.6 L.
STORAGE_WORKERS = 256

# Orion leaves the library's OpenTelemetry spans off, yet for their attributes it still
# looks up each bucket's project and location, starting a thread per operation until one
# lookup has been cached (against the emulator: never). This switch is the library's own.
_NO_BUCKET_METADATA = ("DISABLE_GCS_PYTHON_CLIENT_OTEL_BUCKET_METADATA", "true")

# Each write tags the object with a fresh id. If a conditional upload is retried after
# its first attempt did land (the response was lost), the retry fails with 412; finding
# our own id on the object tells that apart from a real conflicting writer.
_WRITE_ID = "orion-write-id"


def _new_write_id() -> str:
    return uuid.uuid4().hex


def content_type_for(key: str) -> str:
    if key.endswith(".json"):
        return "application/json"
    if key.endswith(".md"):
        return "text/markdown; charset=utf-8"
    return "text/plain; charset=utf-8"


@dataclass(frozen=True, slots=True)
class _Connection:
    """What every request needs; built once, on first use, in a worker thread."""

    client: Client
    bucket: Bucket
    retry: Any  # google.api_core.retry.Retry
    conditional_retry: Any  # google.cloud.storage.retry.ConditionalRetryPolicy
    timeout: float

    def within(self, deadline: float | None) -> _Connection:
        """The same connection with its timeout and retries cut to end by `deadline`."""
        if deadline is None:
            return self
        left = deadline - time.monotonic()
        if left <= 0:
            # Not a store failure (nothing was sent): the caller has stopped waiting.
            raise TimeoutError("no time left in the storage deadline")
        from google.cloud.storage.retry import ConditionalRetryPolicy, is_generation_specified

        retry = self.retry.with_timeout(left)
        return _Connection(
            client=self.client,
            bucket=self.bucket,
            retry=retry,
            conditional_retry=ConditionalRetryPolicy(
                retry, is_generation_specified, ["query_params"]
            ),
            timeout=min(self.timeout, left),
        )


def _tune_session(client: Client, pool_size: int) -> None:
    """Two settings the library offers no public way to make on its requests session.

    - Connections: requests keeps 10 per host by default; with more calls in flight than
      that, every extra one opens (and in production, TLS-handshakes) a new connection and
      throws it away afterwards. Keep as many as the store has threads.
    - Environment: requests looks up proxy and CA-bundle variables on every request
      (0.35–0.65 ms of CPU per GCS operation measured here). The client talks to one
      endpoint: look them up once, for it, and keep them on the session.
    """
    import requests.adapters
    import requests.utils

    try:
        session = client._http  # the library's own requests session, with its credentials
    except AttributeError:  # a library that no longer has it: keep its default behaviour
        return
    for adapter in session.adapters.values():
        if isinstance(adapter, requests.adapters.HTTPAdapter):
            adapter.init_poolmanager(pool_size, pool_size)
    session.proxies.update(requests.utils.get_environ_proxies(client.api_endpoint))
    if session.verify is True:
        bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
        session.verify = bundle or True
    session.trust_env = False


def _failure(cause: BaseException | None, cut_short: bool) -> type[StoreUnavailable]:
    """`StoreUnreachable` when GCS did not answer at all: the connection failed, a server
    error outlasted the retries, or a request went unanswered for its whole timeout (one
    the caller's deadline cut short says nothing: the caller stopped waiting). Any other
    answer (403, 404, 429 on one busy object) is a failure of this call, not an outage."""
    import requests

    if isinstance(cause, requests.ConnectionError | ConnectionError):
        return StoreUnreachable  # refused, reset, no route, DNS, connect timeout
    if isinstance(cause, requests.Timeout):
        return StoreUnavailable if cut_short else StoreUnreachable
    status = getattr(cause, "code", None)  # google.api_core's errors
    if not isinstance(status, int):
        response = getattr(cause, "response", None)  # the media download's errors
        status = getattr(response, "status_code", None)
    if isinstance(status, int) and status >= 500:
        return StoreUnreachable
    return StoreUnavailable


class GcsObjectStore:
    """A `ObjectStore` over one GCS bucket; one client, reused by every call."""

    def __init__(
        self,
        bucket: str,
        *,
        client: Client | None = None,
        project: str | None = None,
        retry_timeout: float = 10.0,
        request_timeout: float = 5.0,
        workers: int = STORAGE_WORKERS,
    ) -> None:
        self.bucket_name = bucket
        self._client = client
        self._project = project
        self._retry_timeout = retry_timeout
        self._request_timeout = request_timeout
        self._workers = workers
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gcs")
        self._connection: _Connection | None = None
        self._connecting = threading.Lock()

    def __repr__(self) -> str:
        return f"GcsObjectStore({self.bucket_name!r})"

    async def read(self, key: str) -> StoredObject | None:
        return await self._run("read", key, self._read, key)

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        return await self._run("write", key, self._write, key, content, if_generation)

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        return await self._run("delete", key, self._delete, key, if_generation)

    async def list(self, prefix: str) -> list[ObjectInfo]:
        return await self._run("list", prefix, self._list, prefix)

    async def connect(self) -> None:
        """Import the library and build the client now (e.g. after start-up, off the
        critical path) instead of on the first memory operation."""
        await asyncio.get_running_loop().run_in_executor(self._executor, self._connect)

    async def close(self) -> None:
        """Let the worker threads go; a call still in flight finishes on its own."""
        self._executor.shutdown(wait=False, cancel_futures=True)

    # -- worker-thread side -------------------------------------------------------------

    async def _run(self, operation: str, key: str, func: Callable[..., T], *args: Any) -> T:
        call = functools.partial(self._translated, operation, key, current_deadline(), func, *args)
        # The caller's context goes along (log fields), as asyncio.to_thread would do.
        in_context = functools.partial(contextvars.copy_context().run, call)
        return await asyncio.get_running_loop().run_in_executor(self._executor, in_context)

    def _translated(
        self,
        operation: str,
        key: str,
        deadline: float | None,
        func: Callable[..., T],
        *args: Any,
    ) -> T:
        """Run `func` within `deadline`, turning the library's failures into this
        package's errors. The time left is measured here, when a thread is free."""
        import requests
        from google.api_core import exceptions as google_errors
        from google.auth import exceptions as auth_errors

        gcs = self._connect().within(deadline)
        cut_short = gcs.timeout < self._request_timeout
        try:
            return func(gcs, *args)
        except google_errors.RetryError as exc:
            error = _failure(exc.cause, cut_short)
            raise error(
                f"GCS {operation} {key!r}: still failing when its retries ran out: {exc.cause}"
            ) from exc
        except (
            google_errors.GoogleAPICallError,
            auth_errors.GoogleAuthError,  # includes missing credentials in production
            requests.RequestException,
            ConnectionError,
        ) as exc:
            raise _failure(exc, cut_short)(f"GCS {operation} {key!r} failed: {exc}") from exc

    def _connect(self) -> _Connection:
        with self._connecting:
            if self._connection is None:
                os.environ.setdefault(*_NO_BUCKET_METADATA)
                from google.cloud import storage
                from google.cloud.storage.retry import (
                    DEFAULT_RETRY,
                    ConditionalRetryPolicy,
                    is_generation_specified,
                )

                client = self._client or storage.Client(project=self._project)
                _tune_session(client, self._workers)
                retry = DEFAULT_RETRY.with_delay(initial=0.1, maximum=2.0, multiplier=2.0)
                retry = retry.with_timeout(self._retry_timeout)
                self._connection = _Connection(
                    client=client,
                    bucket=client.bucket(self.bucket_name),
                    retry=retry,
                    conditional_retry=ConditionalRetryPolicy(
                        retry, is_generation_specified, ["query_params"]
                    ),
                    timeout=self._request_timeout,
                )
            return self._connection

    def _read(self, gcs: _Connection, key: str) -> StoredObject | None:
        from google.api_core import exceptions as google_errors

        from app.storage.gcs_blob import TimedBlob

        blob = TimedBlob(key, gcs.bucket)
        try:
            data = blob.download_as_bytes(timeout=gcs.timeout, retry=gcs.retry)
        except google_errors.NotFound:
            return None
        # One response: the generation and time below belong to exactly this content.
        generation, updated = blob.generation, blob.last_modified
        if generation is None or updated is None:
            raise StoreUnavailable(f"GCS read {key!r}: the download did not say its version")
        return StoredObject(
            key=key,
            content=data.decode("utf-8", errors="replace"),
            generation=int(generation),
            updated=updated,
            size=len(data),
        )

    def _write(self, gcs: _Connection, key: str, content: str, if_generation: int | None) -> int:
        from google.api_core import exceptions as google_errors

        blob = gcs.bucket.blob(key)
        write_id = _new_write_id()
        blob.metadata = {_WRITE_ID: write_id}
        try:
            blob.upload_from_string(
                content.encode("utf-8"),
                content_type=content_type_for(key),
                if_generation_match=if_generation,
                timeout=gcs.timeout,
                retry=gcs.conditional_retry,
            )
        except google_errors.PreconditionFailed as exc:
            assert if_generation is not None  # GCS only answers 412 to conditional writes
            landed = gcs.bucket.get_blob(key, timeout=gcs.timeout, retry=gcs.retry)
            if landed is not None and (landed.metadata or {}).get(_WRITE_ID) == write_id:
                return int(landed.generation)
            raise PreconditionFailed(key, if_generation) from exc
        return int(blob.generation)

    def _delete(self, gcs: _Connection, key: str, if_generation: int | None) -> bool:
        from google.api_core import exceptions as google_errors

        try:
            gcs.bucket.delete_blob(
                key, if_generation_match=if_generation, timeout=gcs.timeout, retry=gcs.retry
            )
        except google_errors.NotFound:
            return False
        except google_errors.PreconditionFailed as exc:
            assert if_generation is not None
            raise PreconditionFailed(key, if_generation) from exc
        return True

    def _list(self, gcs: _Connection, prefix: str) -> list[ObjectInfo]:
        blobs = gcs.client.list_blobs(
            gcs.bucket, prefix=prefix, timeout=gcs.timeout, retry=gcs.retry
        )
        found = [
            ObjectInfo(key=b.name, size=b.size or 0, updated=b.updated, generation=b.generation)
            for b in blobs
        ]
        found.sort(key=lambda item: item.key)
        return found
