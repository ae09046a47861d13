"""Reads and writes of single objects through GCS's JSON API, on the event loop (aiohttp).

Why not google-cloud-storage for these two: it is synchronous, so each call takes a worker
thread, and each request through it (a `Blob`, google-resumable-media, requests and
urllib3) costs about 2 ms of CPU on a 2-core instance — against about 0.25 ms for the same
request over aiohttp (bench/storage_request_cpu.py measures both). A greeting makes several
such requests, and 80 people greeting at once made the CPU, not storage, their wait. Reads
and writes are what a person waits for; listing and deleting (erasure, the Home tab,
retention) stay with the library (app/storage/gcs.py).

The requests are the ones the library sends (tests/storage/test_gcs.py holds them to the
emulator and to a faulty proxy): a media download (`alt=media`), whose headers carry the
generation, `Last-Modified` and the CRC32C the content is checked against; a multipart
upload with the object's metadata, preconditioned by `ifGenerationMatch`; and the object's
metadata. Failures are google-api-core's exceptions (`from_http_status`), as the library
raises them, so one translation and one retry policy serve both paths. Credentials are
google-auth's, refreshed off the event loop when they expire.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote

import aiohttp
import google_crc32c
from google.api_core import exceptions as google_errors
from google.auth.credentials import Credentials

from app.storage.store import ObjectTooLarge

# Runs a blocking call (a token refresh) in the store's worker threads.
RunBlocking = Callable[[Callable[[], Any]], Awaitable[Any]]


class CorruptDownload(ValueError):
    """The content did not match the CRC32C GCS sent with it (worth another attempt)."""


# Far above anything Orion writes (a search index is at most 1.5 MB, a memory file far
# less): an object this large was planted by someone with write access to the bucket, and
# is refused rather than read into the instance's memory (and not retried).
MAX_DOWNLOAD_BYTES = 16 * 1024 * 1024

# What the library retries too: GCS's transient statuses, and requests that got no answer.
_TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


def transient_failure(error: BaseException) -> bool:
    """Whether another attempt may succeed where this one failed."""
    if isinstance(error, google_errors.GoogleAPICallError):
        return error.code in _TRANSIENT_STATUSES
    return isinstance(
        error,
        aiohttp.ClientConnectionError
        | aiohttp.ClientPayloadError
        | TimeoutError
        | ConnectionError
        | CorruptDownload,
    )


@dataclass(frozen=True, slots=True)
class Downloaded:
    data: bytes
    generation: int
    updated: datetime


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where the bucket is reached, and how: built once with the library's client."""

    api: str  # e.g. https://storage.googleapis.com, or the emulator's URL
    bucket: str
    credentials: Credentials
    proxy: str | None  # a forward proxy named in the environment, looked up once
    pool_size: int


class JsonApi:
    """One aiohttp session per event loop (a session cannot move between loops)."""

    def __init__(self, endpoint: Endpoint, run_blocking: RunBlocking) -> None:
        self._endpoint = endpoint
        self._run_blocking = run_blocking
        bucket = quote(endpoint.bucket, safe="")
        self._objects = f"{endpoint.api}/storage/v1/b/{bucket}/o"
        self._downloads = f"{endpoint.api}/download/storage/v1/b/{bucket}/o"
        self._uploads = f"{endpoint.api}/upload/storage/v1/b/{bucket}/o"
        self._session: aiohttp.ClientSession | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None
        self._refreshing: asyncio.Lock | None = None

    async def download(self, key: str, limit_s: float) -> Downloaded | None:
        """The object's content with the generation and time of exactly that content
        (one response), or None when there is no such object."""
        url = f"{self._downloads}/{quote(key, safe='')}"
        async with self._request("GET", url, limit_s, params={"alt": "media"}) as response:
            if response.status == 404:
                await response.read()
                return None
            await _raise_for_status(response)
            if (response.content_length or 0) > MAX_DOWNLOAD_BYTES:
                raise ObjectTooLarge(f"{key}: {response.content_length} bytes")
            data = await response.read()
            if len(data) > MAX_DOWNLOAD_BYTES:  # sent without a length
                raise ObjectTooLarge(f"{key}: {len(data)} bytes")
            headers = response.headers
        _check_crc32c(data, headers.get("x-goog-hash"))
        generation = headers.get("x-goog-generation")
        updated = _http_date(headers.get("Last-Modified"))
        if generation is None or updated is None:
            raise google_errors.from_http_status(502, "the download did not say its version")
        return Downloaded(data=data, generation=int(generation), updated=updated)

    async def upload(
        self,
        key: str,
        data: bytes,
        *,
        content_type: str,
        metadata: dict[str, str],
        if_generation: int | None,
        limit_s: float,
    ) -> int:
        """Store `data` under `key` (only over `if_generation` when given; 0: only when
        absent); returns the new generation."""
        resource = {"name": key, "contentType": content_type, "metadata": metadata}
        params = {"uploadType": "multipart"}
        if if_generation is not None:
            params["ifGenerationMatch"] = str(if_generation)
        with aiohttp.MultipartWriter("related") as body:
            body.append_json(resource)
            body.append(data, {"Content-Type": content_type})
        async with self._request("POST", self._uploads, limit_s, params=params, data=body) as r:
            await _raise_for_status(r)
            stored = await r.json(content_type=None)
        return generation_of(stored)

    async def metadata(self, key: str, limit_s: float) -> dict[str, Any] | None:
        """The object's resource (generation, custom metadata, …), or None when absent."""
        url = f"{self._objects}/{quote(key, safe='')}"
        async with self._request("GET", url, limit_s) as response:
            if response.status == 404:
                await response.read()
                return None
            await _raise_for_status(response)
            resource = await response.json(content_type=None)
        if not isinstance(resource, dict):
            raise google_errors.from_http_status(502, "the answer was not an object resource")
        return resource

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None and not session.closed:
            await session.close()

    # -- one request --------------------------------------------------------------------

    def _request(self, method: str, url: str, limit_s: float, **kwargs: Any) -> _AuthorizedRequest:
        return _AuthorizedRequest(self, method, url, limit_s, kwargs)

    async def _send(
        self, method: str, url: str, limit_s: float, kwargs: dict[str, Any]
    ) -> aiohttp.ClientResponse:
        session = self._current_session()
        headers: dict[str, str] = {}
        await self._authorize(headers)
        return await session.request(
            method,
            url,
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=limit_s),
            proxy=self._endpoint.proxy,
            **kwargs,
        )

    def _current_session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._session
        if session is None or session.closed or self._session_loop is not loop:
            connector = aiohttp.TCPConnector(
                limit=self._endpoint.pool_size, limit_per_host=self._endpoint.pool_size
            )
            # trust_env off: the proxy was looked up once (`Endpoint.proxy`), not per request.
            session = aiohttp.ClientSession(connector=connector, trust_env=False)
            self._session, self._session_loop = session, loop
            self._refreshing = asyncio.Lock()
        return session

    async def _authorize(self, headers: dict[str, str]) -> None:
        credentials = self._endpoint.credentials
        if not credentials.valid:
            # One refresh at a time (google-auth's refresh is blocking): the others wait.
            assert self._refreshing is not None  # made with the session, just before
            async with self._refreshing:
                if not credentials.valid:
                    await self._run_blocking(_refresh(credentials))
        credentials.apply(headers)
        if quota_project := getattr(credentials, "quota_project_id", None):
            headers["x-goog-user-project"] = quota_project


class _AuthorizedRequest:
    """`async with api._request(...) as response`: authorizes, sends, releases."""

    def __init__(
        self, api: JsonApi, method: str, url: str, limit_s: float, kwargs: dict[str, Any]
    ) -> None:
        self._call = (method, url, limit_s, kwargs)
        self._api = api
        self._response: aiohttp.ClientResponse | None = None

    async def __aenter__(self) -> aiohttp.ClientResponse:
        self._response = await self._api._send(*self._call)
        return self._response

    async def __aexit__(self, *_: object) -> None:
        if self._response is not None:
            self._response.release()


def generation_of(resource: object) -> int:
    """The generation an object resource names. An answer without one (a proxy's page, an
    empty body) says nothing about what was stored: GCS failing (502), as a `StoreError`
    to the caller, never a KeyError out of a memory command or a save."""
    generation: Any = resource.get("generation") if isinstance(resource, dict) else None
    try:
        return int(generation)  # GCS sends it as a string of digits
    except (TypeError, ValueError):
        raise google_errors.from_http_status(
            502, "the answer did not say the object's generation"
        ) from None


def _refresh(credentials: Credentials) -> Callable[[], None]:
    def refresh() -> None:
        from google.auth.transport.requests import Request

        credentials.refresh(Request())

    return refresh


async def _raise_for_status(response: aiohttp.ClientResponse) -> None:
    if response.status < 400:
        return
    body = await response.text(errors="replace")
    try:
        message = json.loads(body)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = body[:200]
    raise google_errors.from_http_status(
        response.status, f"{response.method} {response.url.path}: {message}"
    )


def _check_crc32c(data: bytes, hashes: str | None) -> None:
    """As the library does on a download: the content must match GCS's checksum."""
    for part in (hashes or "").split(","):
        name, _, value = part.strip().partition("=")
        if name == "crc32c" and value:
            if base64.b64decode(value) != google_crc32c.value(data).to_bytes(4, "big"):
                raise CorruptDownload("the downloaded content does not match its CRC32C")
            return


def _http_date(value: str | None) -> datetime | None:
    try:
        return parsedate_to_datetime(value) if value else None
    except (TypeError, ValueError):
        return None
