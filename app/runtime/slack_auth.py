"""Slack auth, checked once at start (`auth.test`), for readiness.

A wrong or revoked bot token would otherwise show only as every event failing. Checked
once the Bolt app (and its Web API client) has loaded, in the background, off the ack
path. If Slack cannot be reached the check is retried with the start-up back-off; if
Slack answers and refuses the token, that is final: waiting does not fix a token, and
readiness stays 503 so a revision deployed with it never takes traffic.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from app.runtime.retrying_build import (
    DEFAULT_BACKOFF,
    Backoff,
    BuildState,
    BuildStatus,
    RetryingBuild,
)

if TYPE_CHECKING:
    from slack_sdk.web.async_client import AsyncWebClient

_ERROR_CODE = re.compile(r"[a-z_]{1,64}")


class SlackAuthCheck:
    def __init__(self, *, backoff: Backoff = DEFAULT_BACKOFF) -> None:
        self._backoff = backoff
        self._check: RetryingBuild[bool] | None = None

    def start(self, client: AsyncWebClient) -> None:
        """Call `auth.test` in the background (once; later calls do nothing)."""
        if self._check is not None:
            return

        async def auth_test() -> bool:
            await client.auth_test()
            return True

        self._check = RetryingBuild(
            "slack.auth", auth_test, backoff=self._backoff, permanent=_refused
        )
        self._check.start()

    def status(self) -> BuildStatus:
        if self._check is None:  # the Slack client is still loading
            return BuildStatus(BuildState.BUILDING, attempts=0)
        return self._check.status()

    async def close(self) -> None:
        if self._check is not None:
            await self._check.close()


def _refused(exc: Exception) -> str | None:
    """Slack answered and said no (`invalid_auth`, `token_revoked`, ...): final. A status
    other than 200 (rate limited, Slack's own trouble) and no answer at all are retried."""
    from slack_sdk.errors import SlackApiError

    if isinstance(exc, SlackApiError) and exc.response.status_code == 200:
        code = str(exc.response.get("error"))
        # Slack's error codes are words; anything else is not repeated anywhere.
        return f"Slack refused the bot token: {code if _ERROR_CODE.fullmatch(code) else 'error'}"
    return None
