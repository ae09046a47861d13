"""A request to `POST /slack/events`, checked before Bolt sees it: signature, size, and payload
parsed as Bolt parses it, so what would crash Bolt is a 400 (docs/architecture.md)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

from slack_sdk.signature import SignatureVerifier
from starlette.requests import Request

MAX_BODY_BYTES = 1024 * 1024
MAX_DEPTH = 64
# The SDK verifier's replay window (slack_sdk/signature/__init__.py), applied to the
# headers too so that a stale request is refused before its body is read.
REPLAY_WINDOW_S = 5 * 60
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")


class BodyTooLarge(Exception):
    """The body is, or says it is, larger than the cap."""


class MalformedPayload(ValueError):
    """The signed body is not a payload Orion can handle; the message says why."""


async def read_within_cap(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The whole body, or BodyTooLarge as soon as more than `limit` bytes are declared (the
    server checked `Content-Length` is a number) or have arrived. Raises starlette's
    ClientDisconnect if the client goes away."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


class SlackSignature:
    def __init__(self, signing_secret: str) -> None:
        self._verifier = SignatureVerifier(signing_secret)

    @staticmethod
    def claim(headers: Mapping[str, str]) -> tuple[str, str] | None:
        """The timestamp and signature the headers claim, or None when they are missing,
        garbled or stale: such a request is refused without reading its body."""
        timestamp = headers.get("x-slack-request-timestamp", "")
        signature = headers.get("x-slack-signature", "")
        if not (_TIMESTAMP.fullmatch(timestamp) and _SIGNATURE.fullmatch(signature)):
            return None
        if abs(time.time() - int(timestamp)) > REPLAY_WINDOW_S:
            return None
        return timestamp, signature

    def signed_text(self, body: bytes, claim: tuple[str, str]) -> str | None:
        """The body as text when the claimed signature is Slack's, else None. Slack sends
        UTF-8 only and the SDK verifies text: a body that is not UTF-8 is unsigned."""
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return text if self._verifier.is_valid(text, *claim) else None


def parse_payload(text: str, content_type: str | None) -> dict[str, Any]:
    media_type = (content_type or "").split(";")[0].strip()
    try:
        if media_type == "application/json" or text.startswith("{"):
            data: Any = json.loads(text)
        else:
            form = dict(parse_qsl(text, keep_blank_values=True))
            data = json.loads(form["payload"]) if "payload" in form else form
    except RecursionError as exc:
        raise MalformedPayload("nested too deeply") from exc
    except ValueError as exc:
        raise MalformedPayload("neither JSON nor a form") from exc
    if not isinstance(data, dict):
        raise MalformedPayload("not an object")
    if _deeper_than(data, MAX_DEPTH):
        raise MalformedPayload("nested too deeply")
    return data


def _deeper_than(value: dict[str, Any], limit: int) -> bool:
    """Whether the payload nests objects and arrays more than `limit` levels deep; walked
    with a stack, not recursion, for the same reason the limit exists."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
