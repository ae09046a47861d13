"""What the person sees when Claude can't answer: short, friendly, never exception text."""

from __future__ import annotations

# 429: Orion's own API key is over its rate limit.
BUSY = "Sorry, I'm getting too many requests right now. Please try again in a minute."
# 529 (or an `overloaded_error` mid-stream): Claude itself is busy for everyone, whatever
# Orion's limits; not a rate limit, and worth another try in a moment.
OVERLOADED = (
    "Sorry, Claude is overloaded right now, so I couldn't answer. Please try again in a moment."
)
UNREACHABLE = "Sorry, I couldn't reach my language model just now. Please try again in a moment."
GENERIC = "Sorry, something went wrong on my side while answering. Please try again."
# 401/403 (the key) or 404 (the model, or an address that is not Claude's API): no retry
# mends it; the log names the setting to fix (app/config.py `refused_setting`).
MISCONFIGURED = (
    "Sorry, I can't answer: Claude refused how I'm set up. Whoever runs me can see which "
    "setting to fix in my logs; trying again won't help until then."
)
# An error event's type, as a stream sends it.
_IN_STREAM = {"overloaded_error": OVERLOADED, "rate_limit_error": BUSY, "api_error": UNREACHABLE}


def friendly_error(exc: BaseException) -> str:
    """Map a failure during a turn to the apology shown in the thread."""
    # Already imported by the agent loop; imported here, not at the top, for start-up speed.
    import anthropic
    import httpx2

    if isinstance(exc, anthropic.OverloadedError):
        return OVERLOADED
    if isinstance(exc, anthropic.RateLimitError):
        return BUSY
    if isinstance(
        exc,
        anthropic.AuthenticationError | anthropic.PermissionDeniedError | anthropic.NotFoundError,
    ):
        return MISCONFIGURED
    # An error event inside a stream arrives without its HTTP status: its type says the same.
    in_stream = _error_type(exc) if isinstance(exc, anthropic.APIStatusError) else None
    if isinstance(in_stream, str) and in_stream in _IN_STREAM:
        return _IN_STREAM[in_stream]
    # A connection dropped in the middle of a stream surfaces as the transport's own error.
    if isinstance(
        exc, anthropic.APIConnectionError | anthropic.InternalServerError | httpx2.TransportError
    ):
        return UNREACHABLE
    return GENERIC


def _error_type(exc: BaseException) -> str | None:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            return error.get("type")
    return getattr(exc, "type", None)
