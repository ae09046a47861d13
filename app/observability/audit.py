"""The audit trail of memory: one `audit.memory` line (and one trace event) for every memory
write, erasure and recall, in every scope; its fields are in docs/channels.md. Never what a
memory says: paths are redacted like every log line, contents not logged at all."""

from __future__ import annotations

from typing import Any, Literal

from app.observability import tracing
from app.observability.logging import get_logger
from app.observability.redaction import redact_secret_shapes

log = get_logger(__name__)

Action = Literal["write", "delete", "forget", "erase", "recall", "archive", "unarchive", "setting"]
SLACK = "slack"  # the actor of what Slack's own events did


def audit(
    action: Action, *, scope: str, actor: str | None, what: str | None = None, **counts: Any
) -> None:
    """Record one memory action (never its content)."""
    fields: dict[str, Any] = {"action": action, "scope": scope, "actor": actor or "unknown"}
    if what is not None:
        fields["what"] = redact_secret_shapes(what)[:300]
    fields.update(counts)
    log.info("audit.memory", **fields)
    tracing.event("audit.memory", metadata=fields)


def person_scope(user_id: str) -> str:
    return f"person:{user_id}"


def channel_scope(channel_id: str) -> str:
    return f"channel:{channel_id}"
