"""Links to a message in Slack, made in one place: the Home tab's conversations and the
conversations a search found, shown as sources while Orion answers.

The channel and thread come from records a person's conversations fill (their
preferences, their conversation index), so a link is built only from a Slack channel id
and a Slack timestamp, and always points at Slack.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.memory.scopes import is_channel_id, is_thread_ts


@dataclass(frozen=True)
class ThreadLinks:
    """Links to a message: the archives permalink (`https://ws.slack.com/archives/D…/p…`,
    the form chat.getPermalink returns, which opens DMs too) when the workspace URL is
    known, else `app_redirect`, which opens the conversation itself.

    The only place the Home tab's links are made. The channel and thread come from
    stored files a person can edit (their preferences, their conversation index), so a
    link is built only from a Slack channel id and a Slack timestamp: anything else
    (`javascript:…`, `https://elsewhere`, `D1|<!channel>`) gets no link at all, and
    every link points at Slack. The workspace URL and team come from Slack's auth.test.
    """

    workspace_url: str | None = None
    team_id: str | None = None

    def to(self, channel: str | None, ts: str | None) -> str | None:
        """The link to `ts` in `channel`, or None when either is not Slack's."""
        if not (channel and ts and is_channel_id(channel) and is_thread_ts(ts)):
            return None
        workspace = _slack_workspace_url(self.workspace_url)
        if workspace:
            return f"{workspace}/archives/{channel}/p{ts.replace('.', '')}"
        team = f"&team={self.team_id}" if self.team_id and _TEAM_ID.fullmatch(self.team_id) else ""
        return f"https://slack.com/app_redirect?channel={channel}{team}"


# Slack team ids (`T…`), and workspace URLs as auth.test gives them (`https://acme.slack.com/`,
# Enterprise Grid and GovSlack hosts included): nothing that could end a mrkdwn link.
_TEAM_ID = re.compile(r"T[A-Z0-9]{1,30}")
_WORKSPACE_URL = re.compile(r"https://[a-z0-9-]+(?:\.[a-z0-9-]+)+/?")


def _slack_workspace_url(url: str | None) -> str | None:
    return url.rstrip("/") if url and _WORKSPACE_URL.fullmatch(url) else None
