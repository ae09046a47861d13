"""The one Slack Web API client, with retries for rate limits (`Retry-After` honoured) and server
errors: slack_sdk retries only connection errors by default."""

from __future__ import annotations

import re

from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from app.memory.scopes import is_user_id
from app.observability.logging import get_logger

log = get_logger(__name__)

_ERROR_CODE = re.compile(r"[a-z_]{1,64}")


def configure_web_client(client: AsyncWebClient, *, base_url: str) -> AsyncWebClient:
    """Orion's endpoint, timeout and retries on a client (its public attributes): one built
    here, or the one Bolt builds from the token (given a client of ours as well, Bolt
    warns that the token — which it reads from SLACK_BOT_TOKEN anyway — goes unused)."""
    client.base_url = base_url
    client.timeout = 15
    client.retry_handlers = [
        AsyncConnectionErrorRetryHandler(max_retry_count=2),
        AsyncRateLimitErrorRetryHandler(max_retry_count=3),
        AsyncServerErrorRetryHandler(max_retry_count=2),
    ]
    return client


def without_rate_limit_waits(client: AsyncWebClient) -> AsyncWebClient:
    """`client` (token, endpoint, timeout, pool) giving up at once on a 429, for reads an answer
    must not wait for: `conversations.replies` is once a minute for some apps (docs/channels.md)."""
    return AsyncWebClient(
        token=client.token,
        base_url=client.base_url,
        timeout=client.timeout,
        session=client.session,
        headers=client.headers,
        logger=client.logger,
        retry_handlers=[
            handler
            for handler in client.retry_handlers
            if not isinstance(handler, AsyncRateLimitErrorRetryHandler)
        ],
    )


async def share_connection_pool(client: AsyncWebClient) -> None:
    """Give the client (and Bolt's per-request copies) one aiohttp session, made on the loop
    once Bolt is built: else every call opens its own (docs/benchmarks.md, "Measured once…")."""
    import aiohttp

    if client.session is None:
        client.session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=client.timeout))


async def close_connection_pool(client: AsyncWebClient) -> None:
    if client.session is not None and not client.session.closed:
        await client.session.close()


class BotTokenRefused(Exception):
    """Slack answered `auth.test` and refused the bot token (its error code in `error`)."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


class SlackUnreachable(Exception):
    """Slack's Web API did not answer `auth.test` (after the client's retries)."""


async def check_bot_token(client: AsyncWebClient) -> AsyncSlackResponse:
    """Ask Slack once, before serving, whether it takes the bot token (`auth.test`), else a bad
    one shows only as every event failing: its ids, or `BotTokenRefused`/`SlackUnreachable`."""
    import aiohttp
    from slack_sdk.errors import SlackApiError, SlackClientError

    try:
        return await client.auth_test()
    except SlackApiError as exc:
        if exc.response.status_code != 200:
            raise SlackUnreachable(f"HTTP {exc.response.status_code}") from exc
        code = str(exc.response.get("error"))
        # Slack's error codes are words; anything else is not repeated anywhere.
        raise BotTokenRefused(code if _ERROR_CODE.fullmatch(code) else "error") from None
    except (SlackClientError, aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise SlackUnreachable(type(exc).__name__) from exc


async def dm_of(client: AsyncWebClient, user: object) -> str | None:
    """`user`'s DM with Orion, as Slack says (conversations.open: one user id, never a list
    of them, which would open a group DM); None when Slack did not say. Never raises."""
    if not is_user_id(user):
        return None
    try:
        opened = await client.conversations_open(users=user)
    except Exception as exc:
        log.warning("slack.dm_unavailable", exc_info=exc)
        return None
    channel = (opened.get("channel") or {}).get("id")
    return channel if isinstance(channel, str) else None


class DmOwners:
    """Whose DM an event names: an event's `user` is trusted only in the DM Slack gives that person
    with Orion; asked once a person and workspace, and kept (a DM never changes hands)."""

    MAX_KNOWN = 100_000

    def __init__(self) -> None:
        self._known: dict[tuple[str | None, str], str] = {}

    async def theirs(
        self, client: AsyncWebClient, team: str | None, user: object, channel: str
    ) -> bool | None:
        """Whether `channel` is `user`'s DM; None when Slack did not say."""
        if not is_user_id(user):
            return False
        dm = self._known.get((team, user))
        if dm is None:
            if (dm := await dm_of(without_rate_limit_waits(client), user)) is None:
                return None
            if len(self._known) >= self.MAX_KNOWN:
                self._known.clear()
            self._known[(team, user)] = dm
        return dm == channel
