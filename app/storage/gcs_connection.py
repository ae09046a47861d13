"""The google-cloud-storage client as app/storage/gcs.py uses it, and which failures mean "GCS is
unreachable". Imported only once the library is loaded, by the store's worker threads."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from app.observability.logging import get_logger
from app.storage.store import (
    AccessDenied,
    BucketNotFound,
    DeadlineReached,
    NoCredentials,
    StoreUnavailable,
    StoreUnreachable,
)

log = get_logger(__name__)

if TYPE_CHECKING:
    from google.auth.credentials import Credentials
    from google.cloud.storage import Blob, Bucket, Client

# A burst's round trips in flight, with room for saves (why 256: docs/benchmarks.md,
# "Measured once, behind a choice in the code").
STORAGE_WORKERS = 256

# Far above anything Orion writes (a search index is at most 1.5 MB): an object this large
# was planted in the bucket, and is refused (not retried) rather than read into memory.
MAX_DOWNLOAD_BYTES = 16 * 1024 * 1024

# The library's own switch: with its spans off it still looks the bucket's metadata up, a
# thread per operation (docs/architecture.md, "Inside app/storage").
_NO_BUCKET_METADATA = ("DISABLE_GCS_PYTHON_CLIENT_OTEL_BUCKET_METADATA", "true")


@dataclass(frozen=True, slots=True)
class Connection:
    """What every request needs; built once, on first use, in a worker thread."""

    client: Client
    bucket: Bucket
    retry: Any  # google.api_core.retry.Retry
    timeout: float

    def blob(self, key: str) -> Blob:
        """The object under `key`, which keeps its time when downloaded (`downloaded_at`)."""
        return _blob_class()(key, self.bucket)

    def within(self, deadline: float | None) -> Connection:
        """The same connection with its timeout and retries cut to end by `deadline`."""
        if deadline is None:
            return self
        left = deadline - time.monotonic()
        if left <= 0:
            # Not a store failure (nothing was sent): the caller has stopped waiting.
            raise TimeoutError("no time left in the storage deadline")
        return Connection(
            client=self.client,
            bucket=self.bucket,
            retry=self.retry.with_timeout(left),
            timeout=min(self.timeout, left),
        )


def downloaded_at(blob: Blob) -> datetime:
    """When the content a `Connection.blob` just downloaded was written (its Last-Modified);
    now, if the answer did not say (retention then counts it as fresh, never as gone)."""
    return getattr(blob, _DOWNLOADED_AT, None) or datetime.now(UTC)


_DOWNLOADED_AT = "orion_downloaded_at"
_blob_with_time: type[Blob] | None = None


def _blob_class() -> type[Blob]:
    """google-cloud-storage's Blob, keeping the download's Last-Modified for retention, so a read
    is one request (a private method: docs/architecture.md, "Inside app/storage")."""
    global _blob_with_time
    if _blob_with_time is None:
        from google.cloud.storage import Blob

        class BlobWithTime(Blob):
            def _extract_headers_from_download(self, response: Any) -> None:
                super()._extract_headers_from_download(response)
                setattr(self, _DOWNLOADED_AT, _http_date(response.headers.get("Last-Modified")))

        _blob_with_time = BlobWithTime
    return _blob_with_time


def _http_date(value: str | None) -> datetime | None:
    try:
        return parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError):
        return None


def requests_session(client: Client) -> Any | None:
    """The library's own requests session (with its credentials), or None: a private name
    (docs/architecture.md, "Inside app/storage"); without it Orion works, only slower."""
    session = getattr(client, "_http", None)
    if session is None or not hasattr(session, "adapters"):
        log.warning("storage.gcs_session_unavailable")
        return None
    return session


def tune_session(client: Client, pool_size: int) -> None:
    """A connection per store thread (requests keeps 10 per host), and the environment's proxy
    and CA bundle looked up once (docs/architecture.md, "Inside app/storage")."""
    import requests.adapters

    session = requests_session(client)
    if session is None:  # a library that no longer has it: keep its default behaviour
        return
    for adapter in session.adapters.values():
        if isinstance(adapter, requests.adapters.HTTPAdapter):
            adapter.init_poolmanager(pool_size, pool_size)
    session.proxies.update(environment_proxies(client.api_endpoint))
    if session.verify is True:
        bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
        session.verify = bundle or True
    session.trust_env = False


def environment_proxies(url: str) -> dict[str, str]:
    """The forward proxies the environment names for `url` (none when NO_PROXY covers it)."""
    import requests.utils

    return dict(requests.utils.get_environ_proxies(url))


def failure_of(
    cause: BaseException | None, cut_short: bool, *, operation: str = ""
) -> type[StoreUnavailable]:
    """`StoreUnreachable` when GCS did not answer at all (a timeout the caller's deadline cut
    short is not that), `NoCredentials`, `BucketNotFound` (a 404 to a listing or upload),
    `AccessDenied` (403); any other answer fails this call only (docs/architecture.md)."""
    import requests
    from google.auth import exceptions as auth_errors

    if isinstance(cause, requests.ConnectionError):
        return StoreUnreachable  # refused, reset, no route, DNS, connect timeout
    if isinstance(cause, auth_errors.DefaultCredentialsError):
        # No credentials configured, and no metadata server answering (google-auth says
        # "not found" for both).
        return NoCredentials
    if _unreachable_auth(cause):
        return StoreUnreachable  # the token server could not be reached
    if isinstance(cause, requests.Timeout | TimeoutError):
        return DeadlineReached if cut_short else StoreUnreachable
    if isinstance(cause, ConnectionError):
        return StoreUnreachable  # refused, reset, dropped mid-answer
    status = getattr(cause, "code", None)  # google.api_core's errors
    if not isinstance(status, int):
        response = getattr(cause, "response", None)  # the media download's errors
        status = getattr(response, "status_code", None)
    if isinstance(status, int) and status >= 500:
        return StoreUnreachable
    if status == 404 and operation in ("list", "write"):
        return BucketNotFound
    if status == 403:
        return AccessDenied
    return StoreUnavailable


def _unreachable_auth(error: BaseException | None) -> bool:
    """A google-auth failure to reach its credentials server, directly or as the cause
    of a failed token refresh."""
    from google.auth import exceptions as auth_errors

    while error is not None:
        if isinstance(error, auth_errors.TransportError):
            return True
        error = error.__cause__
    return False


def open_connection(
    bucket_name: str,
    *,
    client: Client | None,
    credentials: Credentials | None,
    project: str | None,
    pool_size: int,
    retry_timeout: float,
    request_timeout: float,
) -> Connection:
    """Import the library and build the client, its session and its retry policies.
    `credentials` (tests) replaces what the environment would give."""
    os.environ.setdefault(*_NO_BUCKET_METADATA)
    from google.cloud import storage
    from google.cloud.storage.retry import DEFAULT_RETRY

    if client is None:
        # Without `credentials`, the library's own choice: anonymous against an emulator,
        # else Application Default Credentials (on Cloud Run, the service account's).
        client = storage.Client(project=project, credentials=credentials)
    tune_session(client, pool_size)
    retry = DEFAULT_RETRY.with_delay(initial=0.1, maximum=2.0, multiplier=2.0)
    retry = retry.with_timeout(retry_timeout)
    return Connection(
        client=client, bucket=client.bucket(bucket_name), retry=retry, timeout=request_timeout
    )
