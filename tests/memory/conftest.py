"""The conversation scope the memory-model tests act in."""

from __future__ import annotations

import pytest

from app.memory.scopes import MemoryScope
from tests.backends import THREAD, USER


@pytest.fixture
def scope() -> MemoryScope:
    return MemoryScope(user_id=USER, thread_ts=THREAD)
