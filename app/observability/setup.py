"""Observability set-up, done once at start-up (and by tests the same way)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from app.config import ObservabilitySettings
from app.observability.logging import configure_logging
from app.observability.redaction import register_secrets


def configure_observability(settings: ObservabilitySettings, *, stream: Any = None) -> None:
    """Secret redaction first, so not even the first log line can leak a token."""
    register_secrets(settings.secret_values())
    configure_logging(
        level=settings.log_level,
        fmt=settings.log_format,
        project=settings.google_cloud_project,
        stream=stream,
    )


def log_to_file(settings: ObservabilitySettings, path: Path) -> str:
    """Observability for a command whose terminal is the person's (`orion chat`, `orion
    memory`): log lines appended to `path`, else warnings and errors (or LOG_LEVEL) to
    stderr. Returns where a failure's details are, as a message tells the person."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        stream = path.open("a", encoding="utf-8", buffering=1)
    except OSError:
        if "LOG_LEVEL" not in os.environ:
            settings = settings.model_copy(update={"log_level": "WARNING"})
        configure_observability(settings, stream=sys.stderr)
        return "the log above has the details"
    configure_observability(settings, stream=stream)
    return f"details in {path.resolve()}"
