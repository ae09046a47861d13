"""Fixtures for end-to-end tests: Orion over HTTP against the fake Slack and Claude."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.memory_bucket import Bucket
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def claude() -> Iterator[FakeClaude]:
    with FakeClaude() as fake:
        yield fake


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    return tmp_path / "memories"


@pytest.fixture
def orion(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Iterator[OrionServer]:
    with OrionServer(make_settings(slack, claude, memory_dir=memory_dir)) as server:
        yield server


@pytest.fixture
def bucket(gcs_emulator: GcsEmulator, gcs_bucket: str) -> Bucket:
    """The test's bucket (`gcs_bucket`), read and written straight on the emulator."""
    return Bucket(gcs_emulator, gcs_bucket)
