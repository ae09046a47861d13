"""Slack's request signature, checked before the body is read or parsed.

Slack signs every request with the app's signing secret: an HMAC of the timestamp and the
raw body (`X-Slack-Request-Timestamp`, `X-Slack-Signature`), valid for five minutes. What
the headers alone can show is checked before the body is read: both present, well formed
and fresh. The body is then verified by the SDK's verifier (signature and replay window)
before anything parses it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from slack_sdk.signature import SignatureVerifier

# The SDK verifier's replay window (slack_sdk/signature/__init__.py), applied to the
# headers too so that a stale request is refused before its body is read.
REPLAY_WINDOW_S = 5 * 60
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
_SIGNATURE = re.compile(r"v0=[0-9a-f]{64}")


@dataclass(frozen=True)
class SignatureClaim:
    """A request's signature headers, well formed and fresh: yet to be checked."""

    timestamp: str
    signature: str


class SlackSignature:
    def __init__(self, signing_secret: str) -> None:
        self._verifier = SignatureVerifier(signing_secret)

    @staticmethod
    def claim(headers: Mapping[str, str]) -> SignatureClaim | None:
        """The signature the headers claim, or None when they are missing, garbled or
        stale: such a request is refused without reading its body."""
        timestamp = headers.get("x-slack-request-timestamp", "")
        signature = headers.get("x-slack-signature", "")
        if not (_TIMESTAMP.fullmatch(timestamp) and _SIGNATURE.fullmatch(signature)):
            return None
        if abs(time.time() - int(timestamp)) > REPLAY_WINDOW_S:
            return None
        return SignatureClaim(timestamp, signature)

    def signed_text(self, body: bytes, claim: SignatureClaim) -> str | None:
        """The body as text when the claimed signature is Slack's, else None.

        Slack sends UTF-8 only, and the SDK verifies the body as text: a body that is not
        UTF-8 cannot carry a signature it accepts, so it is refused as unsigned."""
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return text if self._verifier.is_valid(text, claim.timestamp, claim.signature) else None
