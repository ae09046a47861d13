"""A store that never keeps a secret: every write is scrubbed before it is sent.

A person pastes a Slack token or a database password into a conversation; Claude may save
it with the memory tool, the session summary may repeat it, a stated preference may carry
it. Whatever writes it, the content passes through here on its way to the store, and each
secret of a known shape (app/observability/redaction.py, the one list of them) becomes
`[redacted]` — so it is never read back into a prompt, an export or the Home tab.

Composed once, beneath everything that writes (app/services.py), rather than in each
writer: a new writer cannot forget it. Reads, listings and deletions pass through as they
are. Content without secrets is written byte for byte as given.
"""

from __future__ import annotations

from app.observability.redaction import redact_secret_shapes
from app.storage.store import StoreLayer


class SecretFreeStore(StoreLayer):
    """An `ObjectStore` that redacts secrets from the content of every write."""

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        return await self.inner.write(
            key, redact_secret_shapes(content), if_generation=if_generation
        )
