"""Langfuse tracing behind one small facade.

One client is set up in one place (`configure_tracing`). When Langfuse keys are unset,
tracing is off: Langfuse is not even imported (it is heavy, and without keys it warns on
every call), and every span below is a free no-op. Span names follow
`{component}.{operation}`, e.g. `slack.thread_started`, `agent.turn`, `tool.memory.view`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

from app.observability.redaction import redact_everything

if TYPE_CHECKING:
    from langfuse import Langfuse

ObservationType = Literal["span", "generation", "tool", "agent", "event"]


class _NoopObservation:
    """Stands in for a Langfuse observation when tracing is off."""

    def update(self, **_: Any) -> _NoopObservation:
        return self


_NOOP = _NoopObservation()
_client: Langfuse | None = None


def set_client(client: Langfuse | None) -> None:
    """Install the Langfuse client (or None to turn tracing off). Tests pass their own."""
    global _client
    _client = client


def configure_tracing(
    *, public_key: str | None, secret_key: str | None, base_url: str | None
) -> None:
    """Create the one Langfuse client, or leave tracing off when keys are missing."""
    if not (public_key and secret_key):
        set_client(None)
        return
    from langfuse import Langfuse

    set_client(
        Langfuse(
            public_key=public_key,
            secret_key=secret_key,
            base_url=base_url,
            mask=mask_secrets,
        )
    )


def mask_secrets(*, data: Any, **_: Any) -> Any:
    """Langfuse's `mask`: every input, output and metadata value traced passes through it,
    so neither Orion's own keys nor a secret a person pasted, or one kept in their memory
    and injected into the prompt, ever reaches Langfuse."""
    return redact_everything(data)


def enabled() -> bool:
    return _client is not None


@contextmanager
def observe(name: str, *, as_type: ObservationType = "span", **fields: Any) -> Iterator[Any]:
    """Open an observation as a child of the current one; yields an object with `update()`."""
    if _client is None:
        yield _NOOP
        return
    with _client.start_as_current_observation(name=name, as_type=as_type, **fields) as obs:
        yield obs


@contextmanager
def trace(
    name: str, *, user_id: str | None, session_id: str | None, **fields: Any
) -> Iterator[Any]:
    """Open the root observation of one handled Slack event, tagged with user and thread."""
    if _client is None:
        yield _NOOP
        return
    from langfuse import propagate_attributes

    with (
        _client.start_as_current_observation(name=name, as_type="span", **fields) as obs,
        propagate_attributes(user_id=user_id, session_id=session_id, trace_name=name),
    ):
        yield obs


def event(name: str, **fields: Any) -> None:
    """Record a point-in-time observation (e.g. `memory.context.inject`)."""
    if _client is not None:
        _client.create_event(name=name, **fields)


def current_trace_id() -> str | None:
    """The trace of the event being handled (None when tracing is off): carried with an
    answer so that feedback on it can be scored on the very trace that produced it."""
    return _client.get_current_trace_id() if _client is not None else None


def score(
    name: str, value: float, *, trace_id: str, score_id: str, comment: str | None = None
) -> None:
    """A BOOLEAN score on a trace; sending the same `score_id` again replaces it."""
    if _client is not None:
        _client.create_score(
            name=name,
            value=value,
            trace_id=trace_id,
            score_id=score_id,
            data_type="BOOLEAN",
            comment=comment,
        )


def flush() -> None:
    """Send buffered spans; called at the end of each handled event and at shutdown."""
    if _client is not None:
        _client.flush()


def shutdown() -> None:
    if _client is not None:
        _client.shutdown()
