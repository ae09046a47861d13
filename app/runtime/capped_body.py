"""A request's body, read within a cap and never buffered whole past it (docs/architecture.md,
"How an event flows", 2).

Whether a body is Slack's is known only once all of it is read, so its cost is bounded before:
a declared `Content-Length` above the cap is refused unread, a chunked body as soon as it
passes the cap. 1 MiB fits Slack's largest payloads with room: a Home-tab click carries the
whole view (at most 250 kB, at most tripled by form-encoding), a 40,000-character message
with its rich-text copy stays under 500 kB even fully \\u-escaped."""

from __future__ import annotations

from starlette.requests import Request

MAX_BODY_BYTES = 1024 * 1024


class BodyTooLarge(Exception):
    """The body is, or says it is, larger than the cap."""


def declared_too_large(request: Request, limit: int = MAX_BODY_BYTES) -> bool:
    """Whether the request's `Content-Length` is above the cap (the server checked that
    it is a number before the request reached Orion)."""
    declared = request.headers.get("content-length")
    return declared is not None and declared.isdigit() and int(declared) > limit


async def read_within_cap(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The whole body, or BodyTooLarge as soon as more than `limit` bytes are declared
    or have arrived. Raises starlette's ClientDisconnect if the client goes away."""
    if declared_too_large(request, limit):
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)
