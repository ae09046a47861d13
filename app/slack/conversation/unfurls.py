"""No message Orion posts unfurls its links.

An answer can hold a link Claude was led to write by text it read (a pasted document, a
stored memory), with data in its URL; when Slack unfurls it, Slack's unfurler fetches that
URL, and the data has left. So every chat.postMessage (Bolt's `say` too) turns link and
media unfurling off. chat.update and the streaming methods (chat.startStream,
chat.appendStream, chat.stopStream) take no unfurl arguments: an update keeps what its
post set.
"""

from __future__ import annotations

from typing import Final, TypedDict


class Unfurls(TypedDict):
    unfurl_links: bool
    unfurl_media: bool


NO_UNFURLS: Final[Unfurls] = {"unfurl_links": False, "unfurl_media": False}
