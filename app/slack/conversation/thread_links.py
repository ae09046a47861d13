"""Links to a message in Slack, made in one place: the Home tab's conversations and the
conversations a search found, shown as sources while Orion answers."""

from __future__ import annotations

import asyncio
import re
from collections import OrderedDict
from dataclasses import dataclass

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from app.memory.scopes import is_channel_id, is_thread_ts
from app.observability.logging import get_logger

log = get_logger(__name__)

# How many workspaces' answers a process keeps (its links here, task_display.py's refusals);
# past that it forgets the oldest and asks Slack again.
TEAMS_KEPT = 10_000


@dataclass(frozen=True)
class ThreadLinks:
    """Links to a message: its archives permalink when the workspace URL is known, else
    `app_redirect`; built only from a Slack channel id and timestamp, always pointing at Slack."""

    workspace_url: str | None = None
    team_id: str | None = None

    def to(self, channel: str | None, ts: str | None, thread_ts: str | None = None) -> str | None:
        """The link to `ts` in `channel` (a reply in thread `thread_ts`, when given), or
        None when either is not Slack's."""
        if not (channel and ts and is_channel_id(channel) and is_thread_ts(ts)):
            return None
        workspace = _slack_workspace_url(self.workspace_url)
        if workspace:
            link = f"{workspace}/archives/{channel}/p{ts.replace('.', '')}"
            if thread_ts and thread_ts != ts and is_thread_ts(thread_ts):
                link += f"?thread_ts={thread_ts}&cid={channel}"  # as chat.getPermalink
            return link
        team = f"&team={self.team_id}" if self.team_id and _TEAM_ID.fullmatch(self.team_id) else ""
        return f"https://slack.com/app_redirect?channel={channel}{team}"


# Slack team ids (`T…`), and workspace URLs as auth.test gives them (`https://acme.slack.com/`,
# Enterprise Grid and GovSlack hosts included): nothing that could end a mrkdwn link.
_TEAM_ID = re.compile(r"T[A-Z0-9]{1,30}")
_WORKSPACE_URL = re.compile(r"https://[a-z0-9-]+(?:\.[a-z0-9-]+)+/?")


def _slack_workspace_url(url: str | None) -> str | None:
    return url.rstrip("/") if url and _WORKSPACE_URL.fullmatch(url) else None


class WorkspaceLinks:
    """Each workspace's ThreadLinks, its URL asked of Slack (auth.test) once per team and
    kept for the process; until Slack has said, or when it would not, links open the
    conversation through `app_redirect`."""

    def __init__(self) -> None:
        self._known: OrderedDict[str, ThreadLinks] = OrderedDict()
        self._asking: dict[str, asyncio.Task[ThreadLinks]] = {}

    def known(self, team_id: str | None) -> ThreadLinks:
        """What is known now, without asking Slack."""
        return self._known.get(team_id or "") or ThreadLinks(team_id=team_id)

    async def get(self, client: AsyncWebClient, team_id: str | None) -> ThreadLinks:
        """The workspace's links, asking Slack the first time (one question at a time)."""
        key = team_id or ""
        if key in self._known:
            return self._known[key]
        asking = self._asking.get(key)
        if asking is None:
            asking = asyncio.ensure_future(self._ask(client, team_id))
            self._asking[key] = asking
            asking.add_done_callback(lambda _: self._asking.pop(key, None))
        return await asyncio.shield(asking)

    async def _ask(self, client: AsyncWebClient, team_id: str | None) -> ThreadLinks:
        try:
            found = await client.auth_test()
        except SlackApiError as exc:
            log.warning("slack.workspace_unknown", error=exc.response.get("error"))
            return ThreadLinks(team_id=team_id)
        except Exception as exc:  # Slack unreachable: links open the conversation instead
            log.warning("slack.workspace_unknown", exc_info=exc)
            return ThreadLinks(team_id=team_id)
        links = ThreadLinks(found.get("url"), found.get("team_id") or team_id)
        self._known[team_id or ""] = links
        while len(self._known) > TEAMS_KEPT:
            self._known.popitem(last=False)
        return links
