"""The garbage collector as a server that answers bursts wants it (docs/benchmarks.md, "After
the collector's settings"): `gc.freeze()` leaves the ~240,000 objects the imports leave out of
every later collection, and a young collection every YOUNG_COLLECTION_EVERY new objects, not
Python's 700, keeps a burst from walking every answer in flight hundreds of times. Garbage
without cycles is freed at once either way."""

from __future__ import annotations

import gc

YOUNG_COLLECTION_EVERY = 50_000  # new container objects between young collections


def tune_collector_for_serving() -> None:
    """Collect start-up's garbage once, freeze what is left, and collect the young
    generation less often (call it just before serving, once everything an answer needs
    has been built)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_EVERY)
