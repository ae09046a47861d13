"""FaultyProxy: an HTTP reverse proxy on loopback that injects delays and error statuses.

Put it in front of an upstream (typically the GcsEmulator) and point the client at `.url`
(or name it as the client's forward proxy: requests for any host go to the upstream).
Rules match a substring of the request's path and query, raw or percent-decoded, so
`add_rule("people/U1/memory/preferences.json", delay=5)` catches the download of that
object even though google-cloud-storage sends it as `people%2FU1%2Fmemory%2F…`. Multipart
uploads carry the object name in the body, not the URL: match them with e.g.
"uploadType=multipart" and `method="POST"`, or a conditional one by the version it
replaces (`ifGenerationMatch=<generation>`); the log names it all the same
(`ProxiedRequest.upload_name`).

Note that google-cloud-storage retries 5xx on idempotent calls by itself (with backoff of
a second or more): use `times=` or pass `retry=None` in the code under test accordingly.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import aiohttp
from aiohttp import web

from tests.fakes._http_server import HttpFake
from tests.fakes._waiting import HOLD_LIMIT_S

# Hop-by-hop headers, and those aiohttp recomputes for the body it actually sends.
_SKIP_REQUEST = {"host", "connection", "keep-alive", "transfer-encoding", "content-length"}
_SKIP_RESPONSE = {"connection", "keep-alive", "transfer-encoding", "content-length"}


@dataclass
class Rule:
    match: str
    delay: float = 0.0
    status: int | None = None
    remaining: int | None = None
    method: str | None = None
    corrupt: bool = False  # forward, but flip the answer's first byte (a damaged transfer)
    hits: int = 0
    # Held: matching requests wait (after `delay`) until `release()`.
    held: threading.Event | None = None

    def release(self) -> None:
        """Let the held requests go on (a rule made with `hold=True`)."""
        assert self.held is not None, "not a holding rule"
        self.held.set()

    def matches(self, method: str, raw: str) -> bool:
        if self.method is not None and self.method.upper() != method:
            return False
        return self.match in raw or self.match in unquote(raw)


@dataclass(frozen=True)
class ProxiedRequest:
    method: str
    path_qs: str
    status: int
    # The rule that applied, if any.
    rule: str | None
    # The request's Authorization header, if any (what credentials the client sent).
    authorization: str | None = None
    # When the request arrived and when its answer was ready (`time.monotonic()`), to tell
    # which requests were in flight together.
    started: float = 0.0
    finished: float = 0.0
    # The object an upload names in its body (a multipart upload's metadata, a resumable
    # upload's start), which its URL does not carry; None for every other request.
    upload_name: str | None = None

    def overlaps(self, other: ProxiedRequest) -> bool:
        return self.started < other.finished and other.started < self.finished

    def names(self, text: str) -> bool:
        """Whether the request names `text`: in its path or query (raw or percent-decoded),
        or in the name of the object it uploads."""
        where = (self.path_qs, unquote(self.path_qs), self.upload_name or "")
        return any(text in place for place in where)


class FaultyProxy(HttpFake):
    def __init__(self, upstream: str) -> None:
        super().__init__()
        self.upstream = upstream.rstrip("/")
        self._lock = threading.Lock()
        self._rules: list[Rule] = []
        self._holds: list[threading.Event] = []  # every holding rule's, used up ones too
        self._log: list[ProxiedRequest] = []
        self._in_flight = 0
        self._session: aiohttp.ClientSession | None = None

    def _routes(self) -> list[web.RouteDef]:
        return [web.route("*", "/{tail:.*}", self._forward)]

    def stop(self) -> None:
        self.clear_rules()  # held requests go on: nothing waits on a stopped proxy
        session, self._session = self._session, None
        if session is not None and self._runner is not None:
            self._loop_thread.run(session.close())
        super().stop()

    # --- rules ---

    def add_rule(
        self,
        match: str,
        delay: float = 0.0,
        status: int | None = None,
        times: int | None = None,
        method: str | None = None,
        corrupt: bool = False,
        hold: bool = False,
    ) -> Rule:
        """For requests whose path+query contains `match`: wait `delay` seconds (with
        `hold`, also until `rule.release()`: a stall that ends when the test says, not after
        a time), then answer `status` (with a GCS-style JSON error) or, without status,
        forward (with `corrupt`, its answer's first byte flipped). `times=None` applies
        until `clear_rules()`. The first applicable rule wins."""
        held = threading.Event() if hold else None
        rule = Rule(match, delay, status, times, method, corrupt, held=held)
        with self._lock:
            self._rules.append(rule)
            if held is not None:
                self._holds.append(held)
        return rule

    def hold(self, match: str, *, method: str | None = None) -> threading.Event:
        """Keep the next request whose path+query contains `match` waiting until the
        returned event is set (at most HOLD_LIMIT_S), then forward it: a test can make
        something happen in between (an erasure before a write lands)."""
        rule = self.add_rule(match, times=1, method=method, hold=True)
        assert rule.held is not None
        return rule.held

    def clear_rules(self) -> None:
        """No rule applies from now on; requests held by one go on."""
        with self._lock:
            for held in self._holds:
                held.set()
            self._rules.clear()

    @property
    def requests(self) -> list[ProxiedRequest]:
        """The requests answered so far, in the order their answers were ready."""
        with self._lock:
            return list(self._log)

    @property
    def in_flight(self) -> int:
        """Requests that have arrived and are not answered yet (not in `requests`)."""
        with self._lock:
            return self._in_flight

    def _take_rule(self, method: str, raw: str) -> Rule | None:
        with self._lock:
            for rule in self._rules:
                if not rule.matches(method, raw):
                    continue
                rule.hits += 1
                if rule.remaining is not None:
                    rule.remaining -= 1
                    if rule.remaining <= 0:
                        self._rules.remove(rule)
                return rule
        return None

    # --- proxying ---

    async def _forward(self, request: web.Request) -> web.Response:
        with self._lock:
            self._in_flight += 1
        try:
            return await self._answer(request)
        finally:
            with self._lock:
                self._in_flight -= 1

    async def _answer(self, request: web.Request) -> web.Response:
        started = time.monotonic()
        raw = _origin_form(request.raw_path)
        rule = self._take_rule(request.method, raw)
        if rule is not None and rule.delay > 0:
            await asyncio.sleep(rule.delay)
        if rule is not None and rule.held is not None:
            await asyncio.get_running_loop().run_in_executor(None, rule.held.wait, HOLD_LIMIT_S)
        body = await request.read()
        if rule is not None and rule.status is not None:
            self._note(request, rule.status, rule, started, body)
            return web.json_response(_gcs_error(rule.status), status=rule.status)
        if self._session is None:
            # No automatic decompression: bytes and Content-Encoding pass through unchanged.
            self._session = aiohttp.ClientSession(auto_decompress=False)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _SKIP_REQUEST}
        async with self._session.request(
            request.method,
            self.upstream + raw,
            headers=headers,
            data=body if body else None,
            allow_redirects=False,
            skip_auto_headers=("Accept-Encoding", "User-Agent", "Content-Type"),
        ) as upstream:
            payload = await upstream.read()
            if rule is not None and rule.corrupt and payload:
                payload = bytes([payload[0] ^ 0x01]) + payload[1:]
            out_headers = [
                (k, v) for k, v in upstream.headers.items() if k.lower() not in _SKIP_RESPONSE
            ]
            status = upstream.status
        self._note(request, status, rule, started, body)
        response = web.Response(body=payload, status=status)
        for key, value in out_headers:
            response.headers.add(key, value)
        return response

    def _note(
        self, request: web.Request, status: int, rule: Rule | None, started: float, body: bytes
    ) -> None:
        entry = ProxiedRequest(
            request.method,
            _origin_form(request.raw_path),
            status,
            rule and rule.match,
            request.headers.get("Authorization"),
            started,
            time.monotonic(),
            _upload_name(request, body),
        )
        with self._lock:
            self._log.append(entry)


def _origin_form(target: str) -> str:
    """The path and query of a request target. A client that was given the proxy as its
    forward proxy (HTTP_PROXY) names the whole URL, `http://host/path?query`."""
    if target.startswith(("http://", "https://")):
        rest = target.split("://", 1)[1]
        return "/" + rest.split("/", 1)[1] if "/" in rest else "/"
    return target


def _upload_name(request: web.Request, body: bytes) -> str | None:
    """The object name an upload carries in its body: in the JSON metadata that is a
    multipart upload's first part, or that starts a resumable upload (a plain media upload
    names it in the URL, and its body is the object's content)."""
    target = _origin_form(request.raw_path)
    if request.method != "POST" or not target.startswith("/upload/"):
        return None
    if "uploadType=multipart" in target:
        content_type = request.headers.get("Content-Type", "")
        boundary = content_type.partition("boundary=")[2].split(";")[0].strip().strip('"')
        parts = body.split(b"--" + boundary.encode()) if boundary else []
        metadata = parts[1].partition(b"\r\n\r\n")[2] if len(parts) > 1 else b""
    elif "uploadType=resumable" in target:
        metadata = body
    else:
        return None
    try:
        name = json.loads(metadata).get("name")
    except (ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None


def _gcs_error(status: int) -> dict[str, Any]:
    message = "Service Unavailable" if status == 503 else f"Injected error {status}"
    reason = "backendError" if status >= 500 else "injected"
    return {
        "error": {
            "code": status,
            "message": message,
            "errors": [{"message": message, "domain": "global", "reason": reason}],
        }
    }
