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
    def can_ack_early(body: bytes, content_type: str | None) -> bool:
        """Whether Bolt's answer to this request would be an empty 200."""
        return request_type(body, content_type) in EARLY_ACK_TYPES


def request_type(body: bytes, content_type: str | None) -> str | None:
    try:
        if content_type and content_type.startswith("application/x-www-form-urlencoded"):
            payload = parse_qs(body.decode()).get("payload", [""])[0]
            data = json.loads(payload) if payload else {}
        else:
            data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return data.get("type") if isinstance(data, dict) else None
