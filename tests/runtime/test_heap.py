"""What start-up built is left out of later collections; what answers make is still
collected (app/runtime/heap.py)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from app.runtime.heap import freeze_startup_heap


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


@pytest.fixture
def frozen() -> Iterator[None]:
    yield
    gc.unfreeze()


def test_what_start_up_built_is_not_walked_again(frozen: None) -> None:
    built = _Node()
    assert any(obj is built for obj in gc.get_objects())
    freeze_startup_heap()
    assert not any(obj is built for obj in gc.get_objects())


def test_garbage_made_while_serving_is_still_collected(frozen: None) -> None:
    freeze_startup_heap()
    cycle = _Node()
    gone = weakref.ref(cycle)
    del cycle
    gc.collect()
    assert gone() is None
