"""Acknowledge Slack events the moment their signature checks out.

Slack retries any event not acknowledged within 3 s. A new Cloud Run instance needs longer
than that to import the whole stack, and a busy one spends about a millisecond of CPU in
Bolt's dispatch per request. So events are verified here (the SDK's signature verifier:
signature and 5-minute replay window), acknowledged with an empty 200 — exactly what Bolt
answers for events and button clicks — and handed to Bolt in the background, once it has
loaded. Bolt verifies them again. Requests whose answer has a body (url_verification) go
through Bolt directly.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

from slack_sdk.signature import SignatureVerifier

# Request types whose acknowledgement is an empty 200 (Events API callbacks, clicks).
EARLY_ACK_TYPES = frozenset({"event_callback", "block_actions"})


class EarlyAck:
    def __init__(self, signing_secret: str) -> None:
        self._verifier = SignatureVerifier(signing_secret)

    def is_signed(self, body: bytes, headers: dict[str, str]) -> bool:
        return self._verifier.is_valid_request(body, headers)

    @staticmethod
    def payload_to_ack_early(body: bytes, content_type: str | None) -> dict[str, Any] | None:
        """The request's payload when Bolt's answer to it would be an empty 200 (so it can
        be acknowledged here), else None. Parsed once: the dispatch reads its ids from it."""
        payload = _payload(body, content_type)
        return payload if payload.get("type") in EARLY_ACK_TYPES else None


def _payload(body: bytes, content_type: str | None) -> dict[str, Any]:
    try:
        if content_type and content_type.startswith("application/x-www-form-urlencoded"):
            payload = parse_qs(body.decode()).get("payload", [""])[0]
            data = json.loads(payload) if payload else {}
        else:
            data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}
