"""One span and one log line per memory command: what was touched, whether it worked,
how long it took — never what the files contain, nor a secret a path holds."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from app.memory.tool.errors import MemoryToolError
from app.observability import tracing
from app.observability.logging import get_logger
from app.observability.redaction import redact_secret_shapes

log = get_logger(__name__)

# Only these input fields are recorded; file_text, old_str, new_str and insert_text
# are memory contents.
TRACED_FIELDS = ("path", "old_path", "new_path", "view_range", "insert_line")


def traced_fields(command_input: object) -> dict[str, Any]:
    """The recordable part of a raw tool input, whatever its shape."""
    if not isinstance(command_input, Mapping):
        return {}
    fields: dict[str, Any] = {}
    for name in TRACED_FIELDS:
        if name in command_input:
            value = command_input[name]
            if isinstance(value, str):
                # A path the model made up may hold a secret (it is then refused).
                fields[name] = redact_secret_shapes(value)
            elif isinstance(value, int | list) and not isinstance(value, bool):
                fields[name] = value
            else:
                fields[name] = redact_secret_shapes(repr(value)[:100])
    return fields


@contextmanager
def traced_command(command: str, fields: Mapping[str, Any]) -> Iterator[None]:
    """Record the command run inside the block as span and log line `tool.memory.<command>`.

    Model-visible errors (`MemoryToolError`) are warnings unless marked internal (the
    store failed); cancellation is a warning; any other exception is a bug, an error.
    """
    name = f"tool.memory.{command}"
    started = time.perf_counter()
    with tracing.observe(name, as_type="tool", input={"command": command, **fields}) as span:
        try:
            yield
        except MemoryToolError as exc:
            level = "ERROR" if exc.internal else "WARNING"
            _record(span, name, fields, started, error=exc.log_message, level=level)
            raise
        except asyncio.CancelledError:
            # A caller's time budget ran out: still one line per command, then let it go.
            _record(span, name, fields, started, error="cancelled", level="WARNING")
            raise
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            _record(span, name, fields, started, error=error, level="ERROR")
            raise
        else:
            _record(span, name, fields, started, error=None, level="DEFAULT")


def _record(
    span: Any,
    name: str,
    fields: Mapping[str, Any],
    started: float,
    *,
    error: str | None,
    level: str,
) -> None:
    duration_ms = round((time.perf_counter() - started) * 1000, 2)
    outcome = "ok" if error is None else "error"
    if error is None:
        span.update(output={"ok": True}, metadata={"outcome": outcome, "duration_ms": duration_ms})
        log.info(name, **fields, ok=True, duration_ms=duration_ms)
        return
    error = redact_secret_shapes(error)  # it may quote a path, which may hold a secret
    span.update(
        output={"ok": False, "error": error},
        metadata={"outcome": outcome, "duration_ms": duration_ms},
        level=level,
        status_message=error,
    )
    emit = log.error if level == "ERROR" else log.warning
    emit(name, **fields, ok=False, duration_ms=duration_ms, error=error)
