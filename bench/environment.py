"""The one set-up the in-process benchmarks share."""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import structlog

from app.observability.logging import configure_logging


@contextmanager
def benchmark_environment(storage_emulator_url: str | None = None) -> Iterator[None]:
    """Point google-cloud-storage at the emulator (it reads STORAGE_EMULATOR_HOST when a
    client is built) and render log lines as in production into a buffer nobody reads:
    their cost counts, the lines stay off the table. Restores both afterwards."""
    env = {"STORAGE_EMULATOR_HOST": storage_emulator_url} if storage_emulator_url else {}
    root = logging.getLogger()
    handlers, level, config = root.handlers[:], root.level, structlog.get_config()
    configure_logging(level="INFO", fmt="json", stream=io.StringIO())
    try:
        with mock.patch.dict(os.environ, env):
            yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        structlog.configure(**config)
