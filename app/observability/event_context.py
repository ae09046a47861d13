"""Per-Slack-event context shared by every log line and span of one event."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager

import structlog


def trace_id_for(event_id: str) -> str:
    """A stable 32-hex-digit trace id, so a Slack retry of the same event shares it."""
    return hashlib.sha256(event_id.encode()).hexdigest()[:32]


@contextmanager
def event_context(
    *, event_id: str, user: str | None, channel: str | None, thread_ts: str | None
) -> Iterator[str]:
    """Bind the event's identifiers to every log line emitted inside; yields the trace id."""
    trace_id = trace_id_for(event_id)
    with structlog.contextvars.bound_contextvars(
        trace_id=trace_id, event_id=event_id, user=user, channel=channel, thread_ts=thread_ts
    ):
        yield trace_id
