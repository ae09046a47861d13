"""FakeClaude: Anthropic's Messages API on loopback, for the real `AsyncAnthropic` client.

`AsyncAnthropic(base_url=fake.url, api_key="test")` talks to it. Answers come from a script
(`reply`, `reply_tool_use`, `fail`, ...), consumed one per request, after an optional
`responder` callback; with nothing scripted it echoes the last user text. Both JSON
(`stream: false`) and SSE (`stream: true`) responses are served. The SDK's beta client uses
the same path and names its betas in the `anthropic-beta` header (recorded as `ClaudeCall.betas`).

It answers as today's models do (tests/fakes/claude_models.py): a request the real API
refuses for its model (`thinking: disabled` or forced tool use on Sonnet 5.5, an effort
the thinking setting does not allow, more than 4 cache breakpoints) gets its 400; replies
carry thinking blocks with signatures as the request's thinking setting returns them, and a
loop that drops or alters them gets a 400 (tests/fakes/claude_thinking.py); usage reports
what the prompt cache read and wrote, computed by prefix (tests/fakes/claude_cache.py).
A streamed reply can keep a model's pace (`delta_chars` with `chunk_delay`), and the moment
each stream's first text was sent is recorded (`first_texts`), for benchmarks that time what
follows it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from aiohttp import web
from multidict import CIMultiDict

from tests.fakes import claude_script as script
from tests.fakes._http_server import HttpFake
from tests.fakes._waiting import HOLD_LIMIT_S, PATIENCE_S, wait_until, wait_until_async
from tests.fakes.claude_cache import CacheRefused, PromptCache
from tests.fakes.claude_models import refusal_of, version_refusal
from tests.fakes.claude_script import (
    Drop,
    Failure,
    MidStreamFailure,
    Reply,
    ScriptItem,
)
from tests.fakes.claude_thinking import ThinkingLedger, ThinkingRefused

T = TypeVar("T")

Responder = Callable[[dict[str, Any]], ScriptItem | None]


@dataclass(frozen=True)
class ClaudeCall:
    path: str
    body: dict[str, Any]
    headers: Mapping[str, str]
    # From the `anthropic-beta` header (how the SDK's beta client asks for beta features).
    betas: tuple[str, ...]


@dataclass(frozen=True)
class FirstText:
    """A streamed response's first text delta: when it was sent (`time.monotonic()`, just
    before the write), and the request it answers."""

    at: float
    body: dict[str, Any]


@dataclass(frozen=True)
class StreamEnd:
    """How a streamed response ended: sent whole, or left by the client before its end (the
    write after it went away failed; `at`: then, `time.monotonic()`)."""

    at: float
    complete: bool
    body: dict[str, Any]


class _ApiError(Exception):
    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(message)
        self.status, self.error_type, self.message = status, error_type, message


class FakeClaude(HttpFake):
    def __init__(self, port: int = 0) -> None:
        super().__init__(port)
        self._lock = threading.Lock()
        self._script: deque[ScriptItem] = deque()
        self._calls: list[ClaudeCall] = []
        self._first_texts: list[FirstText] = []
        self._stream_ends: list[StreamEnd] = []
        self._pending_delay = 0.0
        self._pending_hold: threading.Event | None = None
        self._request_ids = itertools.count(1)
        self.thinking = ThinkingLedger()
        self.cache = PromptCache()
        # Consulted before the script: return an item to answer this request, or None.
        self.responder: Responder | None = None

    def _routes(self) -> list[web.RouteDef]:
        return [
            web.post("/v1/messages", self._messages),
            web.post("/v1/messages/count_tokens", self._count_tokens),
        ]

    # --- scripting ---

    def enqueue(self, item: ScriptItem) -> None:
        with self._lock:
            self._script.append(item)

    def reply(
        self,
        text: str,
        *,
        chunk_delay: float = 0.0,
        delta_chars: int | None = None,
        held: threading.Event | None = None,
    ) -> None:
        """`held`: streamed, the first words go out and the rest waits until it is set."""
        self.enqueue(script.text(text, chunk_delay=chunk_delay, delta_chars=delta_chars, held=held))

    def reply_tool_use(
        self,
        name: str,
        input: dict[str, Any],
        text: str | None = None,
        id: str | None = None,
        waits_for: threading.Event | None = None,
    ) -> str:
        """Script a `stop_reason: "tool_use"` answer (given only once `waits_for` is set, if
        given); returns the tool_use id."""
        item = script.tool_use(name, input, text=text, id=id, waits_for=waits_for)
        self.enqueue(item)
        return str(item.content[-1]["id"])

    def refuse(self, partial_text: str = "", category: str | None = "cyber") -> None:
        """Script a safety classifier ending the answer (`stop_reason: "refusal"`)."""
        self.enqueue(script.refusal(partial_text, category))

    def reply_stopped(self, text: str, stop_reason: str) -> None:
        """Script text that ends for `stop_reason` (`max_tokens`, `pause_turn`, ...)."""
        self.enqueue(script.stopped(text, stop_reason))

    def reply_blocks(self, blocks: list[dict[str, Any]], stop_reason: str | None = None) -> None:
        if stop_reason is None:
            has_tool = any(b.get("type") == "tool_use" for b in blocks)
            stop_reason = "tool_use" if has_tool else "end_turn"
        self.enqueue(Reply(list(blocks), stop_reason=stop_reason))

    def fail(
        self,
        status: int = 529,
        error_type: str = "overloaded_error",
        message: str = "Overloaded",
        retry_after: float | None = None,
    ) -> None:
        """An HTTP error; a 429 carries `retry-after` (default 1 s; the SDK honours floats)."""
        if status == 429 and retry_after is None:
            retry_after = 1
        self.enqueue(Failure(status, error_type, message, retry_after))

    def fail_mid_stream(
        self,
        partial_text: str,
        error_type: str = "overloaded_error",
        message: str = "Overloaded",
    ) -> None:
        self.enqueue(MidStreamFailure(partial_text, error_type, message))

    def drop_connection(self, partial_text: str | None = None) -> None:
        """Close the connection without a response — or, for a streaming request with
        `partial_text`, after streaming that much."""
        self.enqueue(Drop(partial_text))

    def delay(self, seconds: float) -> None:
        """Hold the next response (whatever answers it) for `seconds` before sending it."""
        with self._lock:
            self._pending_delay += seconds

    def hold(self) -> threading.Event:
        """Keep the next response (whatever answers it) waiting until the returned event is
        set (at most HOLD_LIMIT_S), so that a test can make something happen while a turn
        waits for Claude."""
        gate = threading.Event()
        with self._lock:
            self._pending_hold = gate
        return gate

    def clear(self) -> None:
        """Drop the script and any pending delay or hold."""
        with self._lock:
            self._script.clear()
            self._pending_delay = 0.0
            self._pending_hold = None

    def reset(self) -> None:
        """Back to a fresh fake (script, delay, responder, recorded calls) — for a fake shared
        by several tests."""
        with self._lock:
            self._script.clear()
            self._pending_delay = 0.0
            self._pending_hold = None
            self._calls.clear()
            self._first_texts.clear()
            self.responder = None
        self.thinking.clear()
        self.cache.clear()

    @property
    def pending(self) -> int:
        """Script items not yet consumed."""
        with self._lock:
            return len(self._script)

    # --- what tests read ---

    @property
    def calls(self) -> list[ClaudeCall]:
        with self._lock:
            return list(self._calls)

    @property
    def first_texts(self) -> list[FirstText]:
        """Each streamed response's first text delta, in the order they were sent."""
        with self._lock:
            return list(self._first_texts)

    @property
    def stream_ends(self) -> list[StreamEnd]:
        """How each streamed response ended, in order."""
        with self._lock:
            return list(self._stream_ends)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Bodies of every /v1/messages request, parsed, in order."""
        return [c.body for c in self.calls if c.path == "/v1/messages"]

    def wait_for(
        self, predicate: Callable[[], T], timeout: float = PATIENCE_S, what: str = "condition"
    ) -> T:
        return wait_until(predicate, timeout, what)

    async def wait_for_async(
        self,
        predicate: Callable[[], T],
        timeout: float = PATIENCE_S,  # noqa: ASYNC109 - same signature as wait_for
        what: str = "condition",
    ) -> T:
        return await wait_until_async(predicate, timeout, what)

    # --- HTTP layer ---

    def _headers(self) -> dict[str, str]:
        return {"request-id": f"req_fake_{next(self._request_ids):06d}"}

    def _error(self, status: int, error_type: str, message: str, **headers: str) -> web.Response:
        body = script.error_body(error_type, message)
        return web.json_response(body, status=status, headers={**self._headers(), **headers})

    async def _accept(self, request: web.Request) -> dict[str, Any]:
        """Parse, record and check a request the way the real API does."""
        try:
            body = json.loads(await request.read())
        except ValueError as e:
            raise _ApiError(400, "invalid_request_error", "request body is not JSON") from e
        betas = request.headers.get("anthropic-beta", "")
        call = ClaudeCall(
            request.path,
            body,
            CIMultiDict(request.headers),
            tuple(b.strip() for b in betas.split(",") if b.strip()),
        )
        with self._lock:
            self._calls.append(call)
        auth = request.headers.get("Authorization", "")
        if not request.headers.get("x-api-key") and not auth.startswith("Bearer "):
            raise _ApiError(401, "authentication_error", "x-api-key header is required")
        if not request.headers.get("anthropic-version"):
            raise _ApiError(400, "invalid_request_error", "anthropic-version header is required")
        if not isinstance(body, dict):
            raise _ApiError(400, "invalid_request_error", "body must be an object")
        for name in ("model", "messages"):
            if name not in body:
                raise _ApiError(400, "invalid_request_error", f"{name}: Field required")
        if (refused := version_refusal(request.headers["anthropic-version"], body)) is not None:
            raise _ApiError(400, "invalid_request_error", refused)
        if body.get("thread") is not None:
            # The SDK's tool_runner defaults to server-held threads (sends only new messages);
            # this fake answers from the messages it is sent, so it refuses them loudly.
            msg = "FakeClaude does not keep server-side threads: run tool_runner with thread=False"
            raise _ApiError(400, "invalid_request_error", msg)
        return body

    async def _count_tokens(self, request: web.Request) -> web.Response:
        try:
            body = await self._accept(request)
        except _ApiError as e:
            return self._error(e.status, e.error_type, e.message)
        if (refused := refusal_of(body)) is not None:
            return self._error(400, "invalid_request_error", refused)
        tokens = script.prompt_blocks_total(body)
        return web.json_response({"input_tokens": tokens}, headers=self._headers())

    def _check(self, body: dict[str, Any]) -> None:
        """What the real API checks of a Messages request before answering it."""
        if not isinstance(body.get("max_tokens"), int):
            raise _ApiError(400, "invalid_request_error", "max_tokens: Field required")
        if (refused := refusal_of(body)) is not None:
            raise _ApiError(400, "invalid_request_error", refused)
        try:
            self.thinking.check(body)
        except ThinkingRefused as e:
            raise _ApiError(400, "invalid_request_error", str(e)) from e
        if (malformed := _malformed_search_result(body)) is not None:
            raise _ApiError(400, "invalid_request_error", malformed)

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        try:
            body = await self._accept(request)
            self._check(body)
        except _ApiError as e:
            return self._error(e.status, e.error_type, e.message)
        item, delay = self._next(body)
        with self._lock:
            gate, self._pending_hold = self._pending_hold, None
        if gate is not None:
            await asyncio.get_running_loop().run_in_executor(None, gate.wait, HOLD_LIMIT_S)
        if delay > 0:
            await asyncio.sleep(delay)
        if isinstance(item, Reply) and item.waits_for is not None:
            await asyncio.get_running_loop().run_in_executor(
                None, item.waits_for.wait, HOLD_LIMIT_S
            )
        stream = body.get("stream") is True
        if isinstance(item, Reply):
            item = dataclasses.replace(item, content=self.thinking.shape(body, item.content))
            try:
                cached = self.cache.usage(body, script.count_tokens)
            except CacheRefused as e:
                return self._error(400, "invalid_request_error", str(e))
            usage = script.estimate_usage(body, item.content, cached)
            if stream:
                events = script.render_sse(body, item, usage)
                return await self._stream(
                    request, events, item.chunk_delay, body=body, held=item.held
                )
            return web.json_response(script.render_json(body, item, usage), headers=self._headers())
        if isinstance(item, Failure):
            extra = {} if item.retry_after is None else {"retry-after": str(item.retry_after)}
            return self._error(item.status, item.error_type, item.message, **extra)
        if isinstance(item, MidStreamFailure):
            if not stream:
                status = script.ERROR_STATUS.get(item.error_type, 500)
                return self._error(status, item.error_type, item.message)
            events = script.render_partial_sse(body, item.partial_text)
            events.append(script.error_event(item.error_type, item.message))
            return await self._stream(request, events, 0.0)
        # Drop
        if stream and item.partial_text is not None:
            events = script.render_partial_sse(body, item.partial_text)
            return await self._stream(request, events, 0.0, drop=True)
        return _drop(request)

    def _next(self, body: dict[str, Any]) -> tuple[ScriptItem, float]:
        item = self.responder(body) if self.responder is not None else None
        with self._lock:
            if item is None and self._script:
                item = self._script.popleft()
            delay, self._pending_delay = self._pending_delay, 0.0
        if item is None:
            item = script.text(f"(fake claude) you said: {last_user_text(body)}")
        return item, delay + item.delay

    async def _stream(
        self,
        request: web.Request,
        events: list[script.Event],
        chunk_delay: float,
        drop: bool = False,
        body: dict[str, Any] | None = None,
        held: threading.Event | None = None,
    ) -> web.StreamResponse:
        headers = {
            **self._headers(),
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-cache",
        }
        response = web.StreamResponse(status=200, headers=headers)
        await response.prepare(request)
        text_sent = False
        try:
            for event in events:
                if not text_sent and _is_text_delta(event):
                    # Noted as it leaves: the write may yield, and the client may act on
                    # the delta before the write returns.
                    text_sent = True
                    with self._lock:
                        self._first_texts.append(FirstText(time.monotonic(), body or {}))
                await response.write(event.encode())
                if held is not None and text_sent:
                    await asyncio.get_running_loop().run_in_executor(None, held.wait, HOLD_LIMIT_S)
                    held = None
                if chunk_delay and event.name == "content_block_delta":
                    await asyncio.sleep(chunk_delay)
            if drop:
                return _drop(request)
            await response.write_eof()
        except ConnectionResetError:
            # The client went away mid-stream; nothing left to tell it.
            self._ended(StreamEnd(time.monotonic(), complete=False, body=body or {}))
            return response
        self._ended(StreamEnd(time.monotonic(), complete=True, body=body or {}))
        return response

    def _ended(self, end: StreamEnd) -> None:
        with self._lock:
            self._stream_ends.append(end)


def _malformed_search_result(body: dict[str, Any]) -> str | None:
    """What the API says of a `search_result` block in a tool result that lacks a field
    (source, title, content: text blocks) or has citations that are not `{"enabled": bool}`."""
    for message in body.get("messages") or []:
        for block in message.get("content") or [] if isinstance(message, dict) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            inner = block.get("content")
            for result in inner if isinstance(inner, list) else []:
                if not isinstance(result, dict) or result.get("type") != "search_result":
                    continue
                for name in ("source", "title"):
                    if not isinstance(result.get(name), str) or not result[name]:
                        return f"search_result.{name}: Field required"
                content = result.get("content")
                if (
                    not isinstance(content, list)
                    or not content
                    or any(not isinstance(c, dict) or c.get("type") != "text" for c in content)
                ):
                    return "search_result.content: Input should be a list of text blocks"
                citations = result.get("citations")
                if citations is not None and not isinstance(
                    citations.get("enabled") if isinstance(citations, dict) else None, bool
                ):
                    return "search_result.citations.enabled: Field required"
    return None


def _is_text_delta(event: script.Event) -> bool:
    return event.name == "content_block_delta" and event.data["delta"]["type"] == "text_delta"


def _drop(request: web.Request) -> web.StreamResponse:
    """Close the TCP connection; aiohttp then has nowhere to write the returned response."""
    transport = request.transport
    if transport is not None:
        transport.close()
    return web.Response()


def message_text(message: dict[str, Any]) -> str:
    """A message's text, whether sent as a string or as blocks (as the last message of each
    of Orion's calls is, to carry its cache breakpoint)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def last_user_text(body: dict[str, Any]) -> str:
    """Text of the latest user message that has any (tool results carry none)."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        texts = [b.get("text", "") for b in content or [] if b.get("type") == "text"]
        if texts:
            return "\n".join(texts)
    return ""


__all__ = [
    "ClaudeCall",
    "Drop",
    "Failure",
    "FakeClaude",
    "FirstText",
    "MidStreamFailure",
    "Reply",
    "ScriptItem",
    "last_user_text",
    "message_text",
]
