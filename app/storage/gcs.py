"""Objects in a Google Cloud Storage bucket, through the synchronous google-cloud-storage in the
store's own thread pool (docs/architecture.md, "Inside app/storage"). Writes are retried only
with `if_generation`: an unconditional retry could overwrite a newer write."""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import contextvars
import functools
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from app.observability.logging import get_logger
from app.storage.deadline import current_deadline, seconds_until
from app.storage.gcs_connection import (
    MAX_DOWNLOAD_BYTES,
    STORAGE_WORKERS,
    Connection,
    downloaded_at,
    failure_of,
    open_connection,
)
from app.storage.store import (
    UNCHANGED,
    ObjectInfo,
    ObjectTooLarge,
    PreconditionFailed,
    StoredObject,
    StoreUnavailable,
    Unchanged,
)

if TYPE_CHECKING:
    from google.auth.credentials import Credentials
    from google.cloud.storage import Client


T = TypeVar("T")
log = get_logger(__name__)

# Far more than starting the worker threads takes (a few ms each on a busy core).
WORKERS_START_S = 10.0

# A fresh id per write: a retried conditional upload whose first attempt landed gets 412,
# and our own id on the object tells that apart from a conflicting writer.
_WRITE_ID = "orion-write-id"


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
        expires: Callable[[str], bool] | None = None,
    ) -> None:
        """`expires`: which keys the bucket's lifecycle rule deletes some days after their
        last write — each is written with its Custom-Time set to then (the rule's
        `daysSinceCustomTime`: gcs-lifecycle.json)."""
        self.bucket_name = bucket
        self._expires = expires
        self._client = client
        self._credentials = credentials
        self._project = project
        self._retry_timeout = retry_timeout
        self._request_timeout = request_timeout
        self._executor = ThreadPoolExecutor(max_workers=STORAGE_WORKERS, thread_name_prefix="gcs")
        self._connection: Connection | None = None
        self._connecting = threading.Lock()
        self._workers_started = False

    def __repr__(self) -> str:
        return f"GcsObjectStore({self.bucket_name!r})"

    async def read(self, key: str) -> StoredObject | None:
        return await self._run("read", key, self._read, key)

    async def read_if_changed(self, key: str, generation: int) -> StoredObject | Unchanged | None:
        """`read`, unless the object is still at `generation`: GCS then answers 304 and
        sends no content."""
        return await self._run("read", key, self._read_if_changed, key, generation)

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        return await self._run("write", key, self._write, key, content, if_generation)

    async def delete(self, key: str, *, if_generation: int | None = None) -> bool:
        return await self._run("delete", key, self._delete, key, if_generation)

    async def list(self, prefix: str) -> list[ObjectInfo]:
        return await self._run("list", prefix, self._list, prefix)

    async def connect(self) -> None:
        """Import the library, build the client in a worker thread (credentials may be looked up
        over the network), and start every worker now, not at a first burst (docs/benchmarks.md,
        "Bursts")."""
        import google.cloud.storage  # noqa: F401

        await self._run("connect", self.bucket_name, lambda _: None)
        if self._workers_started:  # once: later, the barrier would hold threads from requests
            return
        self._workers_started = True
        # Each waits for all the others, so no submit finds an idle thread: each starts one.
        all_started = threading.Barrier(STORAGE_WORKERS, timeout=WORKERS_START_S)
        started = [self._executor.submit(all_started.wait) for _ in range(STORAGE_WORKERS)]
        for outcome in await asyncio.gather(
            *map(asyncio.wrap_future, started), return_exceptions=True
        ):
            if isinstance(outcome, BaseException):  # the others start on demand, as before
                log.warning("storage.workers_not_started", exc_info=outcome)
                break

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
        self, operation: str, key: str, deadline: float | None, func: Callable[..., T], *args: Any
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
        """The connection, built by the first caller; the others wait for it, but not past
        their deadline (or the store's retry budget): building cannot be cut short."""
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
                    pool_size=STORAGE_WORKERS,
                    retry_timeout=self._retry_timeout,
                    request_timeout=self._request_timeout,
                )
            return self._connection
        finally:
            self._connecting.release()

    def _read_if_changed(
        self, gcs: Connection, key: str, generation: int
    ) -> StoredObject | Unchanged | None:
        from google.api_core import exceptions as google_errors

        try:
            return self._read(gcs, key, unless=generation)
        except google_errors.NotModified:
            return UNCHANGED

    def _read(
        self, gcs: Connection, key: str, *, again: bool = True, unless: int | None = None
    ) -> StoredObject | None:
        """`again`: an empty object that turns out written meanwhile is read once more;
        `unless`: a generation GCS answers 304 (`NotModified`) for."""
        from google.api_core import exceptions as google_errors

        blob = gcs.blob(key)
        try:
            # At most one byte past the cap: an object this large was planted by someone
            # with write access to the bucket, and is refused rather than read whole.
            data = blob.download_as_bytes(
                end=MAX_DOWNLOAD_BYTES,
                if_generation_not_match=unless,
                timeout=gcs.timeout,
                retry=gcs.retry,
                # The body in one read, not 8 KiB at a time (docs/benchmarks.md, "Measured once").
                single_shot_download=True,
            )
        except google_errors.NotFound:
            return None
        except google_errors.RequestRangeNotSatisfiable:
            return self._read_empty(gcs, key, again=again)
        if len(data) > MAX_DOWNLOAD_BYTES:
            raise ObjectTooLarge(f"{key}: more than {MAX_DOWNLOAD_BYTES} bytes")
        return StoredObject(
            key=key,
            content=data.decode("utf-8", errors="replace"),
            generation=_generation(blob, key),
            updated=downloaded_at(blob),
            size=len(data),
        )

    def _read_empty(self, gcs: Connection, key: str, *, again: bool) -> StoredObject | None:
        """An empty object has no byte 0 to range over (HTTP 416): its metadata says the rest.
        Refilled meanwhile: read again, once, never "" with another content's generation."""
        empty = gcs.bucket.get_blob(key, timeout=gcs.timeout, retry=gcs.retry)
        if empty is None:
            return None
        if not empty.size:
            return StoredObject(key, "", _generation(empty, key), empty.updated, 0)
        if again:
            return self._read(gcs, key, again=False)
        raise StoreUnavailable(f"GCS read {key!r}: changed on every read")

    def _write(self, gcs: Connection, key: str, content: str, if_generation: int | None) -> int:
        from google.api_core import exceptions as google_errors

        blob = gcs.blob(key)
        write_id = _new_write_id()  # one per write, whatever the retries
        blob.metadata = {_WRITE_ID: write_id}
        if self._expires is not None and self._expires(key):
            blob.custom_time = datetime.now(UTC)
        try:
            blob.upload_from_string(
                content.encode("utf-8"),
                content_type=content_type_for(key),
                if_generation_match=if_generation,
                timeout=gcs.timeout,
                # The library retries conditional uploads only (ConditionalRetryPolicy).
                retry=gcs.retry if if_generation is not None else None,
            )
        except google_errors.PreconditionFailed as exc:
            assert if_generation is not None  # GCS only answers 412 to conditional writes
            landed = gcs.bucket.get_blob(key, timeout=gcs.timeout, retry=gcs.retry)
            if landed is not None and (landed.metadata or {}).get(_WRITE_ID) == write_id:
                return _generation(landed, key)
            raise PreconditionFailed(key, if_generation) from exc
        return _generation(blob, key)

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
        found = (ObjectInfo(b.name, b.size or 0, b.updated, b.generation) for b in blobs)
        return sorted(found, key=lambda item: item.key)


def _generation(blob: Any, key: str) -> int:
    """The generation GCS named for the object. An answer without one (a proxy's page, an
    empty body) says nothing about what was stored: a store failure, never a TypeError out
    of a memory command or a save."""
    try:
        return int(blob.generation)
    except (TypeError, ValueError):
        raise StoreUnavailable(f"GCS did not say the generation of {key!r}") from None


@contextlib.contextmanager
def _as_store_errors(
    operation: str,
    key: str,
    failures: tuple[type[BaseException], ...],
    cut_short: Callable[[], bool],
) -> Iterator[None]:
    """The libraries' failures as this package's errors (gcs_connection.failure_of).
    `cut_short`: the caller's deadline cut the timeout, so a timeout is not an outage."""
    from google.api_core import exceptions as google_errors

    try:
        yield
    except google_errors.RetryError as exc:
        error = failure_of(exc.cause, cut_short(), operation=operation)
        raise error(
            f"GCS {operation} {key!r}: still failing when its retries ran out: {exc.cause}"
        ) from exc
    except failures as exc:
        error = failure_of(exc, cut_short(), operation=operation)
        raise error(f"GCS {operation} {key!r} failed: {exc}") from exc
