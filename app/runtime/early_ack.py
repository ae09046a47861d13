"""Acknowledge Slack events the moment their signature checks out.

Slack retries any event not acknowledged within 3 s. A new Cloud Run instance needs longer
than that to import the whole stack, and a busy one spends about a millisecond of CPU in
Bolt's dispatch per request. So events whose signature checked out (app/runtime/
slack_signature.py) are acknowledged with an empty 200 — exactly what Bolt answers for
events and button clicks — and handed to Bolt in the background, once it has loaded.
Bolt verifies them again. Requests whose answer has a body (url_verification) go through
Bolt directly.
"""

from __future__ import annotations

from typing import Any

# Request types whose acknowledgement is an empty 200 (Events API callbacks, clicks).
EARLY_ACK_TYPES = frozenset({"event_callback", "block_actions"})


def acks_early(payload: dict[str, Any]) -> bool:
    """Whether Bolt's answer to this payload would be an empty 200, so it can be
    acknowledged here."""
    return payload.get("type") in EARLY_ACK_TYPES
