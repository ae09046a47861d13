"""Structured logging: JSON lines for Cloud Logging, text on a TTY, each event's fields bound with
`structlog.contextvars` (docs/operations.md, "Logs and traces")."""

from __future__ import annotations

import functools
import hashlib
import logging
import sys
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

import structlog
from structlog.typing import EventDict, ExcInfo, FilteringBoundLogger, Processor, WrappedLogger

from app.observability.redaction import redact_everything

_SEVERITY = {
    "debug": "DEBUG",
    "info": "INFO",
    "warning": "WARNING",
    "warn": "WARNING",
    "error": "ERROR",
    "exception": "ERROR",
    "critical": "CRITICAL",
}
_project: str | None = None


def _cloud_logging_fields(_: WrappedLogger, method: str, event_dict: EventDict) -> EventDict:
    event_dict["severity"] = _SEVERITY.get(event_dict.pop("level", method), "DEFAULT")
    event_dict["message"] = event_dict.pop("event", "")
    trace_id = event_dict.get("trace_id")
    if trace_id and _project:
        event_dict["logging.googleapis.com/trace"] = f"projects/{_project}/traces/{trace_id}"
    return event_dict


def _error_named(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    """A line with a caught exception names its type (`error`), unless it names another."""
    exc = event_dict.get("exc_info")
    if isinstance(exc, BaseException):
        event_dict.setdefault("error", type(exc).__name__)
    return event_dict


def _redact_secrets(_: WrappedLogger, __: str, event_dict: EventDict) -> EventDict:
    """Orion's own secrets, and any of a known shape: a person's pasted token quoted in a
    line, or a workspace's bot token (distribution mode) echoed by a library's error."""
    return {key: redact_everything(value) for key, value in event_dict.items()}


def traceback_of(exc_info: ExcInfo) -> str:
    """Python's traceback of a caught exception, causes first, each frame as file, line and function
    only: source lines cost an `ast.parse` a frame (docs/operations.md, "Logs and traces")."""
    lines: list[str] = []
    _add_traceback(exc_info[1], lines, set())
    return "".join(lines).rstrip("\n")


def _add_traceback(exc: BaseException | None, lines: list[str], seen: set[int]) -> None:
    if exc is None or id(exc) in seen:
        return
    seen.add(id(exc))
    cause, context = exc.__cause__, exc.__context__
    if cause is not None and id(cause) not in seen:
        _add_traceback(cause, lines, seen)
        lines.append(_CAUSED)
    elif context is not None and not exc.__suppress_context__ and id(context) not in seen:
        _add_traceback(context, lines, seen)
        lines.append(_DURING)
    if exc.__traceback__ is not None:
        lines.append("Traceback (most recent call last):\n")
        last, repeats = "", 0
        for frame, line in traceback.walk_tb(exc.__traceback__):
            code = frame.f_code
            where = f'  File "{code.co_filename}", line {line}, in {code.co_name}\n'
            repeats = repeats + 1 if where == last else 0
            if repeats < _SHOWN_REPEATS:
                lines.append(where)
            elif repeats == _SHOWN_REPEATS:
                lines.append("  [the line above repeated]\n")  # a recursion: once is enough
            last = where
    lines.extend(traceback.format_exception_only(type(exc), exc))
    for inner in exc.exceptions if isinstance(exc, BaseExceptionGroup) else ():
        lines.append("\nIn the group above:\n")
        _add_traceback(inner, lines, seen)


_CAUSED = "\nThe above exception was the direct cause of the following exception:\n\n"
_DURING = "\nDuring handling of the above exception, another exception occurred:\n\n"
_SHOWN_REPEATS = 3


def configure_logging(
    *,
    level: str = "INFO",
    fmt: Literal["auto", "json", "console"] = "auto",
    project: str | None = None,
    stream: Any = None,
) -> None:
    global _project
    _project = project
    stream = stream or sys.stdout
    use_console = fmt == "console" or (fmt == "auto" and stream.isatty())

    shared: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        _error_named,
        structlog.processors.ExceptionRenderer(traceback_of),
        _redact_secrets,
        # After the scrubbing: the level, the logger's name and the time are Orion's own.
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="time"),
    ]
    renderer: Processor
    if use_console:
        renderer = structlog.dev.ConsoleRenderer(timestamp_key="time")
    else:
        shared.append(_cloud_logging_fields)
        renderer = structlog.processors.JSONRenderer()

    structlog.configure(
        processors=[*shared, renderer],
        # Drops lines below the level before any processor runs.
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level)),
        logger_factory=functools.cache(lambda name=None: _NamedWriteLogger(stream, name)),
        # Bound loggers not cached: each `configure_logging` (tests make several) takes
        # effect at once. The line writers are, one per logger name and configuration.
        cache_logger_on_first_use=False,
    )
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=shared,
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    # Filled into every record (a stack walk per line) and printed by no renderer here: the
    # logging HOWTO's "Optimization" section.
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # Chatty libraries: their INFO lines carry no operational value for Orion.
    for name in ("httpx", "httpx2", "urllib3", "google", "opentelemetry", "langfuse"):
        logging.getLogger(name).setLevel(logging.WARNING)
    # With its logger's own level unset, slack_sdk builds debug lines on every call only
    # for the handler to drop them (docs/benchmarks.md, "Measured once…").
    logging.getLogger("slack_sdk.web.async_base_client").setLevel(level)


class _NamedWriteLogger(structlog.WriteLogger):
    """structlog's line writer, with the name `add_logger_name` reads (as from a stdlib logger)."""

    def __init__(self, stream: Any, name: str | None) -> None:
        super().__init__(stream)
        self.name = name or "orion"


def get_logger(name: str) -> FilteringBoundLogger:
    return structlog.get_logger(name)


def since(started: float) -> dict[str, float]:
    """A log line's `duration_ms` since `started` (a `time.perf_counter()`)."""
    return {"duration_ms": round((time.perf_counter() - started) * 1000, 1)}


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
