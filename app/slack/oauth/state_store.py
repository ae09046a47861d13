"""slack_sdk's `AsyncOAuthStateStore` (docs/distribution.md, "The install state"): a signed state
proves itself, so issuing stores nothing; a good one coming back is spent, create-only."""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import re
import secrets
import time
from collections.abc import Callable

from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from app.memory.key_prefixes import OAUTH_STATES
from app.observability.logging import get_logger
from app.slack.oauth.installation_store import STORE_BUDGET_S
from app.storage.deadline import storage_deadline
from app.storage.store import CREATE_ONLY, ObjectStore, PreconditionFailed

log = get_logger(__name__)

DEFAULT_EXPIRATION_S = 600
# Signed with the client secret, for this purpose only.
_DOMAIN = b"orion/slack-oauth-state/v1\x00"
# `{seconds}.{nonce: 16 bytes}.{signature: 32 bytes}`, each base64url without padding.
_STATE = re.compile(r"(?P<issued>[0-9]{1,12})\.(?P<nonce>[A-Za-z0-9_-]{22})\.[A-Za-z0-9_-]{43}")


class SignedOAuthStateStore(AsyncOAuthStateStore):
    logger = logging.getLogger(__name__)  # the interface's; Orion logs through structlog

    def __init__(
        self,
        store: ObjectStore,
        secret: str,
        *,
        expiration_seconds: int = DEFAULT_EXPIRATION_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._key = secret.encode()  # the app's client secret
        self.expiration_seconds = expiration_seconds
        self._clock = clock

    async def async_issue(self, *args: object, **kwargs: object) -> str:
        return signed_state(self._key, int(self._clock()), _b64(secrets.token_bytes(16)))

    async def async_consume(self, state: str) -> bool:
        found = _STATE.fullmatch(state) if isinstance(state, str) else None
        if found is None:
            log.info("slack.oauth.state_refused", reason="malformed")
            return False
        if not hmac.compare_digest(state, signed_state(self._key, *_parts(found))):
            log.info("slack.oauth.state_refused", reason="forged")
            return False
        age = self._clock() - int(found["issued"])
        if not -1 <= age <= self.expiration_seconds:  # a second of clock skew
            log.info("slack.oauth.state_refused", reason="expired")
            return False
        try:
            with storage_deadline(STORE_BUDGET_S):
                await self._store.write(
                    f"{OAUTH_STATES.prefix}{found['nonce']}", "spent", if_generation=CREATE_ONLY
                )
        except PreconditionFailed:
            log.info("slack.oauth.state_refused", reason="used")
            return False
        return True


def signed_state(key: bytes, issued: int, nonce: str) -> str:
    """The state issued at `issued` (unix seconds) with `nonce`, signed with `key`."""
    payload = f"{issued}.{nonce}"
    signature = hmac.new(key, _DOMAIN + payload.encode(), hashlib.sha256).digest()
    return f"{payload}.{_b64(signature)}"


def _parts(found: re.Match[str]) -> tuple[int, str]:
    return int(found["issued"]), found["nonce"]


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")
