"""Keep CPython's cyclic garbage collector off the objects that live as long as the process.

Once the clients are built, the heap holds about 190,000 such objects (the SDKs, their
pydantic models, Bolt). Every full collection walks all of them: pauses of 30–110 ms were
timed (with `gc.callbacks`) during bursts of 100 events, and no event is acknowledged
meanwhile. Moved to the permanent generation, which collections skip, they cost nothing.
"""

from __future__ import annotations

import gc


def freeze_long_lived_objects() -> None:
    """Call once start-up has built everything long-lived."""
    gc.collect()  # start-up garbage first: frozen objects are never collected
    gc.freeze()
