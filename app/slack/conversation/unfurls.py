"""No message Orion posts unfurls its links: a link Claude was led to write by text it read could
carry data in its URL, which Slack's unfurler would fetch (docs/channels.md, "Prompts pasted by a
member"). chat.update and the streaming methods take no unfurl arguments: an update keeps what
its post set."""

from __future__ import annotations

from typing import Final, TypedDict


class Unfurls(TypedDict):
    unfurl_links: bool
    unfurl_media: bool


NO_UNFURLS: Final[Unfurls] = {"unfurl_links": False, "unfurl_media": False}
