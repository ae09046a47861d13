"""The test's bucket, read and written straight on the GCS emulator (never through Orion
or a FaultyProxy).

Keys come from `app.memory.homes`; the layout itself (docs/architecture.md) is pinned by
tests/memory/test_homes.py.
"""

from __future__ import annotations

from collections.abc import Callable

from app.memory.scopes import global_context_key
from tests.fakes._waiting import PATIENCE_S, wait_until
from tests.fakes.gcs import GcsEmulator

GLOBAL_KEY = global_context_key()


class Bucket:
    """The test's bucket, read and written around Orion (straight to the emulator)."""

    def __init__(self, emulator: GcsEmulator, name: str) -> None:
        self.emulator, self.name = emulator, name

    def write(self, key: str, content: str) -> int:
        """Returns the object's generation: conditional writes of it name it in their URL."""
        return self.emulator.write(self.name, key, content)

    def read(self, key: str) -> str | None:
        data = self.emulator.read(self.name, key)
        return None if data is None else data.decode()

    def names(self) -> list[str]:
        return self.emulator.names(self.name)

    def generations(self) -> dict[str, str]:
        """Every object's generation: a write, even of the same bytes, changes it."""
        return self.emulator.generations(self.name)

    def delete(self, key: str) -> None:
        self.emulator.delete(self.name, key)

    def wait_for(
        self, key: str, predicate: Callable[[str], bool] = bool, timeout: float = PATIENCE_S
    ) -> str:
        """The object's content, once it exists and satisfies `predicate`."""

        def check() -> str | None:
            content = self.read(key)
            return content if content is not None and predicate(content) else None

        return wait_until(check, timeout, f"{key} in the bucket")
