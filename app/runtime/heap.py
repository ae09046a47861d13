"""The garbage collector as a server that answers bursts wants it.

Importing the stack leaves about 240,000 objects that live as long as the process, and
Python's cyclic collector walks all of them in every full collection: 80 people at once
made eight of those, about 140 ms each on one core, the event loop stopped for each.
`gc.freeze()` (the standard library's own answer for long-lived servers) leaves them out
of every later collection. The collector's first threshold then decides the rest: at
Python's default (a young collection every 700 new objects) a burst of 80 people made
over 500 collections, each walking every answer still in flight — 0.6–0.9 s of one core;
every 50,000, 0.2 s (measured with `gc.callbacks`, docs/benchmarks.md). Garbage without
cycles is freed at once either way; cycles wait a little longer.
"""

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
