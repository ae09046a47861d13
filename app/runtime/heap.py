"""What start-up built, moved out of the garbage collector's way before serving.

Importing the stack leaves about 240,000 objects that live as long as the process, and
Python's cyclic collector walks all of them in every full collection: 80 people at once
made eight of those, about 140 ms each on one core, the event loop stopped for each.
`gc.freeze()` (the standard library's own answer for long-lived servers) leaves them out
of every later collection; what the answers allocate is collected as before.
"""

from __future__ import annotations

import gc


def freeze_startup_heap() -> None:
    """Collect start-up's garbage once, then freeze what is left (call it just before
    serving, when everything an answer needs has been built)."""
    gc.collect()
    gc.freeze()
