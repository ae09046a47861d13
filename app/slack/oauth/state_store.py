"""slack_sdk's `AsyncOAuthStateStore` on Orion's object store.

An install starts at `GET /slack/install`, which issues a random state (and sets it in
the installer's browser as a cookie: Bolt's check); Slack sends it back to
`GET /slack/oauth_redirect`. A state is good once, for `expiration_seconds`:

- issued: 32 random bytes, written create-only under `oauth-states/{state}`;
- consumed: read, then deleted only in the generation read (a conditional delete), so of
  two redirects carrying the same state exactly one wins, on one instance or several;
- anything else — unknown, malformed, expired, already used — is refused, and Bolt
  answers with its failure page having stored nothing.

States the bucket still holds (never completed) are deleted by its lifecycle rule after a
day (`oauth-states/` in gcs-lifecycle.json).
"""

from __future__ import annotations

import json
import re
import secrets
from datetime import UTC, datetime, timedelta
from logging import Logger

from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from app.memory.key_prefixes import OAUTH_STATES_PREFIX
from app.observability.logging import get_logger
from app.slack.oauth.installation_store import STORE_BUDGET_S
from app.storage.deadline import storage_deadline
from app.storage.store import CREATE_ONLY, ObjectStore, PreconditionFailed

log = get_logger(__name__)

DEFAULT_EXPIRATION_S = 600
# What `secrets.token_urlsafe(32)` produces: a state of any other shape was not ours.
_STATE = re.compile(r"[A-Za-z0-9_-]{43}")


class ObjectStoreOAuthStateStore(AsyncOAuthStateStore):
    def __init__(self, store: ObjectStore, *, expiration_seconds: int = DEFAULT_EXPIRATION_S):
        self._store = store
        self.expiration_seconds = expiration_seconds

    @property
    def logger(self) -> Logger:  # the interface's; Orion logs through structlog
        import logging

        return logging.getLogger(__name__)

    async def async_issue(self, *args: object, **kwargs: object) -> str:
        state = secrets.token_urlsafe(32)
        issued = json.dumps({"issued_at": datetime.now(UTC).isoformat()})
        with storage_deadline(STORE_BUDGET_S):
            await self._store.write(_key(state), issued, if_generation=CREATE_ONLY)
        return state

    async def async_consume(self, state: str) -> bool:
        if not isinstance(state, str) or not _STATE.fullmatch(state):
            log.info("slack.oauth.state_refused", reason="malformed")
            return False
        with storage_deadline(STORE_BUDGET_S):
            stored = await self._store.read(_key(state))
            if stored is None:
                log.info("slack.oauth.state_refused", reason="unknown_or_used")
                return False
            try:
                consumed = await self._store.delete(_key(state), if_generation=stored.generation)
            except PreconditionFailed:
                consumed = False
        if not consumed:
            log.info("slack.oauth.state_refused", reason="used")
            return False
        if self._expired(stored.content):
            log.info("slack.oauth.state_refused", reason="expired")
            return False
        return True

    def _expired(self, content: str) -> bool:
        try:
            issued_at = datetime.fromisoformat(json.loads(content)["issued_at"])
        except (ValueError, KeyError, TypeError):
            return True
        age = datetime.now(UTC) - issued_at
        return not timedelta(0) <= age <= timedelta(seconds=self.expiration_seconds)


def _key(state: str) -> str:
    return f"{OAUTH_STATES_PREFIX}{state}"
