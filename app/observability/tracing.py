"""Langfuse tracing behind one small facade (docs/operations.md). Without Langfuse keys
tracing is off and Langfuse is not even imported; every span is then a free no-op. Span names
are `{component}.{operation}` (`agent.turn`, `tool.memory.view`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from app.observability.logging import get_logger
from app.observability.redaction import redact_everything

if TYPE_CHECKING:
    from langfuse import Langfuse
    from langfuse.api import ObservationV2

    from app.config import ObservabilitySettings

# The kinds Orion opens as a context (Langfuse's start_as_current_observation takes no "event").
ObservationType = Literal["span", "generation", "tool", "agent"]

log = get_logger(__name__)

# The metadata key naming the workspace of a trace (what an uninstall deletes by).
TEAM_METADATA_KEY = "team_id"
# Langfuse's observations API gives at most 1,000 a page; traces are deleted 100 a request.
_OBSERVATIONS_PAGE = 1_000
_DELETE_BATCH = 100
# A bound on a server that keeps answering with a next page: 100,000 observations.
_MAX_PAGES = 100
# Erasure is not on a conversation's path, but must not hang on an unreachable server.
_API_OPTIONS = {"timeout_in_seconds": 10, "max_retries": 1}


class _NoopObservation:
    def update(self, **_: Any) -> _NoopObservation:
        return self


_NOOP = _NoopObservation()
_client: Langfuse | None = None


def set_client(client: Langfuse | None) -> None:
    """Install the Langfuse client (or None to turn tracing off). Tests pass their own."""
    global _client
    _client = client


def configure_tracing(settings: ObservabilitySettings) -> None:
    """Create the one Langfuse client, or leave tracing off when keys are missing."""
    public_key, secret_key = settings.langfuse_public_key, settings.langfuse_secret_key
    if public_key is None or secret_key is None:
        set_client(None)
        return
    from langfuse import Langfuse

    set_client(
        Langfuse(
            public_key=public_key.get_secret_value(),
            secret_key=secret_key.get_secret_value(),
            base_url=settings.langfuse_base_url,
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
    name: str,
    *,
    user_id: str | None,
    session_id: str | None,
    team_id: str | None = None,
    **fields: Any,
) -> Iterator[Any]:
    """Open the root observation of one handled Slack event, tagged with user and thread
    (and, serving many workspaces, the workspace: the same user id in two is two people)."""
    if _client is None:
        yield _NOOP
        return
    from langfuse import propagate_attributes

    metadata = {TEAM_METADATA_KEY: team_id} if team_id else None
    with (
        _client.start_as_current_observation(name=name, as_type="span", **fields) as obs,
        propagate_attributes(
            user_id=user_id, session_id=session_id, trace_name=name, metadata=metadata
        ),
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


async def forget_person_traces(user_id: str) -> int | None:
    """Delete every Langfuse trace of `user_id` (their "Forget everything"), best effort: how
    many were deleted, or None when tracing is off or Langfuse could not be asked (logged)."""
    return await _forget("tracing.forget", {"user_id": user_id})


async def forget_team_traces(team: str) -> int | None:
    """Delete every Langfuse trace whose metadata names the workspace as `team_id` (its
    uninstall), best effort. Only those whose metadata as returned names it: an older
    Langfuse ignores the filter and lists everyone's (docs/distribution.md)."""
    condition = {
        "type": "stringObject",
        "column": "metadata",
        "key": TEAM_METADATA_KEY,
        "operator": "=",
        "value": team,
    }
    # The SDK sends a metadata value as JSON; Langfuse returns it parsed or as sent.
    names = {team, json.dumps(team)}

    def of_team(observation: ObservationV2) -> bool:
        named = (observation.metadata or {}).get(TEAM_METADATA_KEY)
        return isinstance(named, str) and named in names  # a list would not even hash

    return await _forget(
        "tracing.forget_team",
        {"filter": json.dumps([condition]), "fields": "core,metadata"},
        keep=of_team,
    )


async def _forget(
    event: str, query: dict[str, str], keep: Callable[[ObservationV2], bool] | None = None
) -> int | None:
    client = _client
    if client is None:
        return None
    try:
        found = await asyncio.to_thread(_delete_traces_of, client, query, keep)
    except Exception as exc:
        log.warning(f"{event}.failed", exc_info=exc)
        return None
    if found.left_over:
        # Listed by Langfuse, but not this erasure's: kept.
        log.warning(f"{event}.not_theirs_kept", observations=found.left_over)
    if not found.complete:
        log.warning(f"{event}.incomplete", traces=found.deleted, pages=_MAX_PAGES)
    log.info(event, traces=found.deleted)
    return found.deleted


@dataclass(frozen=True)
class _Deleted:
    deleted: int  # traces
    complete: bool  # False: Langfuse still had pages when the bound was reached
    left_over: int  # observations listed that `keep` refused


def _delete_traces_of(
    client: Langfuse, query: dict[str, str], keep: Callable[[ObservationV2], bool] | None
) -> _Deleted:
    """Delete the traces of the observations `query` lists (Langfuse's observations API)."""
    trace_ids: dict[str, None] = {}  # in the order found, each once
    cursor: str | None = None
    left_over = 0
    options: dict[str, str] = {"fields": "core", **query}
    for _ in range(_MAX_PAGES):
        page = client.api.observations.get_many(
            limit=_OBSERVATIONS_PAGE, cursor=cursor, request_options=_API_OPTIONS, **options
        )
        for observation in page.data:
            if keep is not None and not keep(observation):
                left_over += 1
            elif observation.trace_id:
                trace_ids[observation.trace_id] = None
        cursor = page.meta.cursor
        if not cursor:
            break
    found = list(trace_ids)
    for start in range(0, len(found), _DELETE_BATCH):
        client.api.trace.delete_multiple(
            trace_ids=found[start : start + _DELETE_BATCH], request_options=_API_OPTIONS
        )
    return _Deleted(len(found), complete=not cursor, left_over=left_over)


def flush() -> None:
    """Send buffered spans; called at the end of each handled event and at shutdown."""
    if _client is not None:
        _client.flush()


def shutdown() -> None:
    if _client is not None:
        _client.shutdown()
