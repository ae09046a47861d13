"""No message Orion posts unfurls its links: one Claude was led to write could carry data in its URL
for Slack's unfurler to fetch (docs/channels.md, "Prompts pasted by a member")."""

from __future__ import annotations

from typing import Final, TypedDict


class Unfurls(TypedDict):
    unfurl_links: bool
    unfurl_media: bool


NO_UNFURLS: Final[Unfurls] = {"unfurl_links": False, "unfurl_media": False}
