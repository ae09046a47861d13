"""Both object-store backends behind one fixture (`backend`, `store`), so every test that
uses a store runs against each; and the people and threads those tests use."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from app.memory import secret_free_store
from app.memory.retention import SessionRetention
from app.memory.team_keys import TeamErasure, first_pass, seal_team
from app.storage.gcs import GcsObjectStore
from app.storage.local_directory import LocalDirectoryStore
from app.storage.store import ObjectStore
from app.storage.team_scope import Tenant
from tests.fakes.gcs import GcsEmulator

USER = "U0123ABCD"
OTHER_USER = "U0999ZZZZ"
THREAD = "1712345678.123456"
OTHER_THREAD = "1712345999.000001"


@dataclass
class Backend:
    """A store plus a way to look at its objects without going through it."""

    name: str
    store: ObjectStore
    directory: Path | None = None
    emulator: GcsEmulator | None = None
    bucket: str | None = None

    def kept(self) -> ObjectStore:
        """The store as Orion keeps memories in it (app/memory/secret_free_store.py, `kept`)."""
        return secret_free_store.kept(self.store, SessionRetention())

    def raw_names(self) -> list[str]:
        if self.emulator is not None:
            assert self.bucket is not None
            return self.emulator.names(self.bucket)
        assert self.directory is not None
        return sorted(
            p.relative_to(self.directory).as_posix()
            for p in self.directory.rglob("*")
            if p.is_file() and not p.name.startswith(".")
        )

    def raw_read(self, key: str) -> str | None:
        if self.emulator is not None:
            assert self.bucket is not None
            data = self.emulator.read(self.bucket, key)
            return None if data is None else data.decode()
        assert self.directory is not None
        path = self.directory / key
        return path.read_text() if path.is_file() else None


@pytest.fixture(params=["local", "gcs"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    if request.param == "local":
        directory = tmp_path / "memories"
        return Backend("local", LocalDirectoryStore(directory), directory=directory)
    bucket: str = request.getfixturevalue("gcs_bucket")
    emulator: GcsEmulator = request.getfixturevalue("gcs_emulator")
    return Backend("gcs", GcsObjectStore(bucket), emulator=emulator, bucket=bucket)


@pytest.fixture
def store(backend: Backend) -> ObjectStore:
    return backend.store


async def erase_team(
    deployment_store: ObjectStore, tenant: Tenant, *, now: datetime | None = None
) -> TeamErasure:
    """What an uninstall does to the store beneath every workspace's scope
    (app/slack/oauth/uninstall.py): the workspace sealed, then its first pass."""
    await seal_team(deployment_store, tenant, now=now)
    return await first_pass(deployment_store, tenant)
