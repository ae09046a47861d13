"""Observability set-up, done once at start-up (and by tests the same way)."""

from __future__ import annotations

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
