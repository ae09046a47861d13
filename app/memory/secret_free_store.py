"""A store that never keeps a secret: each of a known shape becomes `[redacted]` beneath every
writer (docs/memory-controls.md); `kept`: with expired conversations read as absent."""

from __future__ import annotations

import asyncio

from app.memory.retention import ExpiringSessionsStore, SessionRetention
from app.observability.redaction import redact_secret_shapes
from app.storage.store import ObjectStore, StoreLayer

# Up to Slack's longest message, redaction costs milliseconds at worst on the event loop
# (bench/secret_shapes.py); past it, the cost grows with the write (0.1–0.7 s for a large
# search index), and a worker thread takes it.
OFF_LOOP_CHARS = 40_000


class SecretFreeStore(StoreLayer):
    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        if len(content) > OFF_LOOP_CHARS:
            scrubbed = await asyncio.to_thread(redact_secret_shapes, content)
        else:
            scrubbed = redact_secret_shapes(content)
        return await self.inner.write(key, scrubbed, if_generation=if_generation)


def kept(store: ObjectStore, retention: SessionRetention) -> ObjectStore:
    return SecretFreeStore(ExpiringSessionsStore(store, retention))
