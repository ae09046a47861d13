"""Shared fixtures: the loopback protocol peers every test talks to (see tests/fakes/)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.fakes.gcs import GcsEmulator


@pytest.fixture(scope="session")
def gcs_emulator() -> Iterator[GcsEmulator]:
    """One fake-gcs-server process for the whole run; tests isolate by bucket."""
    with GcsEmulator() as emulator:
        yield emulator


@pytest.fixture
def gcs_bucket(gcs_emulator: GcsEmulator, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh, empty bucket; STORAGE_EMULATOR_HOST points google-cloud-storage at it."""
    name = f"orion-test-{uuid.uuid4().hex[:12]}"
    gcs_emulator.create_bucket(name)
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_emulator.url)
    return name
