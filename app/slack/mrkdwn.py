"""Slack's message text format (mrkdwn): how stored text is shown as text.

Slack reads `<…>` as links, mentions and `<!channel>`-style broadcasts, and `&` starts an
entity. Anything a person or Claude wrote — a name, a preference, a summary, a welcome —
is escaped before Orion posts or publishes it, so it can never become a link Orion posted.
"""

from __future__ import annotations


def escape(text: str) -> str:
    """`text` shown as itself in a Slack message or a mrkdwn block."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
