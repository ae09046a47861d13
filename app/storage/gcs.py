"""Objects in a Google Cloud Storage bucket (memories and Orion's own records alike).

Reads and writes, what a person waits for, go through GCS's JSON API on the event loop
(app/storage/gcs_json_api.py: a tenth of the CPU per request). Listing and deleting go
through google-cloud-storage, which is synchronous, so they run in worker threads. The
library is also slow to import (about a second), and Orion must acknowledge Slack's first
event within 3 s: it is imported when the first memory operation builds the connection
(the library's client, its credentials and endpoint), never at module import.

The library's calls run in the store's own thread pool, sized for Cloud Run's request
concurrency, with an HTTP connection pool of the same size. asyncio's default pool (6
threads on 2 cores) is shared with every other `to_thread` and would queue a burst's
calls one batch after another.

Transient failures (429, 5xx, timeouts, dropped connections) are retried with
google-api-core's exponential back-off, bounded by `retry_timeout`; each HTTP request is
bounded by `request_timeout`. On a person's path both are cut to what is left of the
caller's storage deadline (app/storage/deadline.py), so no retry loop outlives the
person's wait. Writes are retried only when they carry `if_generation` (the library's
`ConditionalRetryPolicy` rule): retrying an unconditional upload could silently overwrite
a newer write. When retries give up the store raises `StoreUnavailable`.

With `STORAGE_EMULATOR_HOST` set the library itself points at the emulator and uses
anonymous credentials and no project; in production it uses Application Default
Credentials (the Cloud Run service account).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import contextvars
import functools
import threading
import uuid
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from app.storage.deadline import current_deadline, seconds_until
from app.storage.gcs_connection import STORAGE_WORKERS, Connection, failure_of, open_connection
from app.storage.store import ObjectInfo, PreconditionFailed, StoredObject

if TYPE_CHECKING:
    from google.auth.credentials import Credentials
    from google.cloud.storage import Client

    from app.storage.gcs_json_api import JsonApi


T = TypeVar("T")

# One request over the JSON API, given a function saying how long it may take.
Request = Callable[["JsonApi", Callable[[], float]], Awaitable[T]]

# Each write tags the object with a fresh id. If a conditional upload is retried after
# its first attempt did land (the response was lost), the retry fails with 412; finding
# our own id on the object tells that apart from a real conflicting writer.
_WRITE_ID = "orion-write-id"


# How long a request may outlive its caller's deadline (see `_on_loop`). The caller cancels
# it when it stops waiting: it does not keep a connection busy for long.
_DEADLINE_GRACE_S = 0.05


def _new_write_id() -> str:
    return uuid.uuid4().hex


def content_type_for(key: str) -> str:
    if key.endswith(".json"):
        return "application/json"
    if key.endswith(".md"):
        return "text/markdown; charset=utf-8"
    return "text/plain; charset=utf-8"


class GcsObjectStore:
    """A `ObjectStore` over one GCS bucket; one client, reused by every call."""

    def __init__(
        self,
        bucket: str,
        *,
        client: Client | None = None,
        credentials: Credentials | None = None,
        project: str | None = None,
        retry_timeout: float = 10.0,
        request_timeout: float = 5.0,
        workers: int = STORAGE_WORKERS,
    ) -> None:
        self.bucket_name = bucket
        self._client = client
        self._credentials = credentials
        self._project = project
        self._retry_timeout = retry_timeout
        self._request_timeout = request_timeout
        self._workers = workers
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gcs")
        self._connection: Connection | None = None
        self._connecting = threading.Lock()
        self._api: JsonApi | None = None
        self._retry: Any = None  # google.api_core.retry.AsyncRetry, made on first use

    def __repr__(self) -> str:
        return f"GcsObjectStore({self.bucket_name!r})"

    async def read(self, key: str) -> StoredObject | None:
        async def download(api: JsonApi, time_limit: Callable[[], float]) -> StoredObject | None:
            got = await api.download(key, time_limit())
            if got is None:
                return None
            return StoredObject(
                key=key,
                content=got.data.decode("utf-8", errors="replace"),
                generation=got.generation,
                updated=got.updated,
                size=len(got.data),
            )

        return await self._on_loop("read", key, download, retried=True)

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        data = content.encode("utf-8")
        write_id = _new_write_id()  # one per write, whatever the retries

        async def upload(api: JsonApi, time_limit: Callable[[], float]) -> int:
            from google.api_core import exceptions as google_errors

            from app.storage.gcs_json_api import generation_of

            try:
                return await api.upload(
                    key,
                    data,
                    content_type=content_type_for(key),
                    metadata={_WRITE_ID: write_id},
                    if_generation=if_generation,
                    limit_s=time_limit(),
                )
            except google_errors.PreconditionFailed as exc:
                assert if_generation is not None  # GCS only answers 412 to conditional writes
                landed = await api.metadata(key, time_limit())
                if landed is not None and (landed.get("metadata") or {}).get(_WRITE_ID) == write_id:
                    return generation_of(landed)
                raise PreconditionFailed(key, if_generation) from exc

        return await self._on_loop("write", key, upload, retried=if_generation is not None)

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        return await self._run("delete", key, self._delete, key, if_generation)

    async def list(self, prefix: str) -> list[ObjectInfo]:
        return await self._run("list", prefix, self._list, prefix)

    async def connect(self) -> None:
        """Import the library and build the client now (e.g. after start-up, off the
        critical path) instead of on the first memory operation. Fails as an operation
        would: `StoreUnreachable` when no credentials could be had for want of a network."""
        await self._run("connect", self.bucket_name, _connected)

    async def close(self) -> None:
        """Let the worker threads go; a call still in flight finishes on its own."""
        if self._api is not None:
            await self._api.close()
        self._executor.shutdown(wait=False, cancel_futures=True)

    # -- event-loop side (reads and writes) ---------------------------------------------

    async def _on_loop(self, operation: str, key: str, request: Request[T], *, retried: bool) -> T:
        """Send `request` (retried when `retried`), within the caller's deadline, turning
        failures into this package's errors as `_translated` does for the library."""
        import aiohttp
        from google.api_core import exceptions as google_errors
        from google.auth import exceptions as auth_errors

        deadline = current_deadline()
        api = self._api or await self._open_api(operation, key)
        left = seconds_until(deadline)
        if left is not None and left <= 0:
            # Not a store failure (nothing was sent): the caller has stopped waiting.
            raise TimeoutError("no time left in the storage deadline")
        cut_short = left is not None and left < self._request_timeout

        def time_limit() -> float:
            """This attempt's bound: the request timeout, or what is left if less — plus a
            moment, so that a caller waiting on the same deadline (the memory loader) sees
            its own timeout first and counts the request as timed out, not failed."""
            now_left = seconds_until(deadline)
            if now_left is None:
                return self._request_timeout
            return min(self._request_timeout, now_left + _DEADLINE_GRACE_S)

        attempt = functools.partial(request, api, time_limit)
        if retried:
            budget = self._retry_timeout if left is None else min(self._retry_timeout, left)
            attempt = self._retry.with_timeout(budget)(attempt)
        failures = (
            google_errors.GoogleAPICallError,
            auth_errors.GoogleAuthError,  # a token refresh that failed
            aiohttp.ClientError,
            TimeoutError,
            ConnectionError,
            ValueError,  # a corrupt download, or an answer that is not JSON
            KeyError,  # an upload's answer without its generation
        )
        with _as_store_errors(operation, key, failures, lambda: cut_short):
            return await attempt()

    async def _open_api(self, operation: str, key: str) -> JsonApi:
        """The JSON API over the connection, built (in a worker thread) by the first call."""
        await self._run(operation, key, _connected)
        if self._api is None:
            from app.storage.gcs_json_api import JsonApi, transient_failure

            assert self._connection is not None
            self._retry = self._connection.async_retry(transient_failure)
            self._api = JsonApi(
                self._connection.endpoint,
                lambda blocking: asyncio.get_running_loop().run_in_executor(
                    self._executor, blocking
                ),
            )
        return self._api

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

        cut_short = False
        failures = (
            google_errors.GoogleAPICallError,
            auth_errors.GoogleAuthError,  # includes missing credentials in production
            requests.RequestException,
            ConnectionError,
        )
        with _as_store_errors(operation, key, failures, lambda: cut_short):
            # Inside: building the client can fail too (no credentials in production).
            gcs = self._connect(deadline).within(deadline)
            cut_short = gcs.timeout < self._request_timeout
            return func(gcs, *args)

    def _connect(self, deadline: float | None) -> Connection:
        """The connection, built by the first caller; the others wait for it, but not
        past their deadline (without one, not past the store's own retry budget).
        Building it can take long and cannot be cut short from here: in production the
        client looks its credentials up, and google-auth gives a metadata server that
        does not answer several attempts of seconds each."""
        if (connection := self._connection) is not None:
            return connection
        wait = seconds_until(deadline)
        if not self._connecting.acquire(timeout=self._retry_timeout if wait is None else wait):
            # Not a store failure (nothing was sent): the caller has stopped waiting.
            raise TimeoutError("no time left in the storage deadline: still connecting")
        try:
            if self._connection is None:
                self._connection = open_connection(
                    self.bucket_name,
                    client=self._client,
                    credentials=self._credentials,
                    project=self._project,
                    pool_size=self._workers,
                    retry_timeout=self._retry_timeout,
                    request_timeout=self._request_timeout,
                )
            return self._connection
        finally:
            self._connecting.release()

    def _delete(self, gcs: Connection, key: str, if_generation: int | None) -> bool:
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

    # builtins.list: inside the class body, `list` names the method above.
    def _list(self, gcs: Connection, prefix: str) -> builtins.list[ObjectInfo]:
        blobs = gcs.client.list_blobs(
            gcs.bucket, prefix=prefix, timeout=gcs.timeout, retry=gcs.retry
        )
        found = [
            ObjectInfo(key=b.name, size=b.size or 0, updated=b.updated, generation=b.generation)
            for b in blobs
        ]
        found.sort(key=lambda item: item.key)
        return found


@contextlib.contextmanager
def _as_store_errors(
    operation: str,
    key: str,
    failures: tuple[type[BaseException], ...],
    cut_short: Callable[[], bool],
) -> Iterator[None]:
    """The libraries' failures (`failures`, and retries that ran out) as this package's
    errors: `StoreUnreachable` when GCS looks down, else `StoreUnavailable`
    (gcs_connection.failure_of). `cut_short`: whether the caller's deadline had cut the
    request's timeout, which makes a timeout the caller's, not an outage."""
    from google.api_core import exceptions as google_errors

    try:
        yield
    except google_errors.RetryError as exc:
        error = failure_of(exc.cause, cut_short())
        raise error(
            f"GCS {operation} {key!r}: still failing when its retries ran out: {exc.cause}"
        ) from exc
    except failures as exc:
        raise failure_of(exc, cut_short())(f"GCS {operation} {key!r} failed: {exc}") from exc


def _connected(_: Connection) -> None:
    """What `connect()` does once the connection is there: nothing more."""
