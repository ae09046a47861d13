"""The memory layout's keys, as DESIGN.md §2 pins them, and the test's bucket read and
written straight on the GCS emulator (never through Orion or a FaultyProxy).

The keys are spelled out here rather than taken from `app.memory.paths`, so that a change
to the layout shows up as a failing test.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from urllib.parse import quote

from app.memory.paths import global_context_key
from tests.fakes._waiting import wait_until
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
        url = f"{self.emulator.url}/storage/v1/b/{self.name}/o"
        with urllib.request.urlopen(url, timeout=10) as response:
            items = json.loads(response.read()).get("items", [])
        return {item["name"]: str(item["generation"]) for item in items}

    def delete(self, key: str) -> None:
        url = f"{self.emulator.url}/storage/v1/b/{self.name}/o/{quote(key, safe='')}"
        with urllib.request.urlopen(urllib.request.Request(url, method="DELETE"), timeout=10):
            pass

    def wait_for(
        self, key: str, predicate: Callable[[str], bool] = bool, timeout: float = 10
    ) -> str:
        """The object's content, once it exists and satisfies `predicate`."""

        def check() -> str | None:
            content = self.read(key)
            return content if content is not None and predicate(content) else None

        return wait_until(check, timeout, f"{key} in the bucket")
