"""What start-up built is left out of later collections; what answers make is still
collected, cycles included (app/runtime/heap.py)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from app.runtime.heap import YOUNG_COLLECTION_EVERY, tune_collector_for_serving


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


@pytest.fixture
def frozen() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_what_start_up_built_is_not_walked_again(frozen: None) -> None:
    built = _Node()
    assert any(obj is built for obj in gc.get_objects())
    tune_collector_for_serving()
    assert not any(obj is built for obj in gc.get_objects())


def test_garbage_made_while_serving_is_still_collected(frozen: None) -> None:
    tune_collector_for_serving()
    cycle = _Node()
    gone = weakref.ref(cycle)
    del cycle
    # No explicit gc.collect(): what an answer allocates next triggers the collection.
    _ = [[] for _ in range(2 * YOUNG_COLLECTION_EVERY)]
    assert gone() is None
