"""The garbage collector as a server that answers bursts wants it: start-up's heap frozen, the
young generation collected far less often than Python's 700 (docs/benchmarks.md, "After the
collector's settings"). Garbage without cycles is freed at once either way."""

from __future__ import annotations

import gc

YOUNG_COLLECTION_EVERY = 50_000  # new container objects between young collections


def tune_collector_for_serving() -> None:
    """Collect start-up's garbage once, freeze what is left, and collect the young generation
    less often: call it just before serving, once everything an answer needs is built."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_EVERY)
