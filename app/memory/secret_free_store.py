"""A store that never keeps a secret: every write is scrubbed before it is sent.

A person pastes a Slack token or a database password into a conversation; Claude may save
it with the memory tool, the session summary may repeat it, a stated preference may carry
it. Whatever writes it, the content passes through here on its way to the store, and each
secret of a known shape (app/observability/redaction.py, the one list of them) becomes
`[redacted]` — so it is never read back into a prompt, an export or the Home tab.

Composed once, beneath everything that writes (app/services.py), rather than in each
writer: a new writer cannot forget it. Reads, listings and deletions pass through as they
are. Content without secrets is written byte for byte as given. A large write (a search
index of several MB) is scrubbed on a worker thread, so that the event loop goes on
serving every other conversation meanwhile.
"""

from __future__ import annotations

import asyncio

from app.observability.redaction import redact_secret_shapes
from app.storage.store import StoreLayer

# Up to Slack's longest message, redaction costs milliseconds at worst on the event loop
# (bench/secret_shapes.py); past it, the cost grows with the write (0.1–0.7 s for a large
# search index), and a worker thread takes it.
OFF_LOOP_CHARS = 40_000


class SecretFreeStore(StoreLayer):
    """An `ObjectStore` that redacts secrets from the content of every write."""

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        if len(content) > OFF_LOOP_CHARS:
            scrubbed = await asyncio.to_thread(redact_secret_shapes, content)
        else:
            scrubbed = redact_secret_shapes(content)
        return await self.inner.write(key, scrubbed, if_generation=if_generation)
