"""A request's body, read within a cap and never buffered whole past it.

Anyone on the internet can POST to `/slack/events`, and whether a body is Slack's is only
known once all of it has been read (the signature covers every byte). So what a request
can cost is bounded before that: a declared `Content-Length` above the cap is refused
before a byte is read, and a body without one (chunked) is read chunk by chunk as the
server receives it and refused as soon as it passes the cap.

The cap, 1 MiB, fits the largest payloads Slack sends Orion with room to spare:
- a click on the Home tab carries the whole published view, which Slack limits to
  250 kB (`views.publish` answers `view_too_large` above it); form-encoding at most
  triples it (every byte as `%XX`): under 750 kB;
- a message event of 40,000 characters (Slack's limit) with its rich-text copy of the
  same text: 80,000 characters, under 500 kB even with every character \\u-escaped.
Under attack, the memory held is the cap times the requests being read at once.
"""

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
