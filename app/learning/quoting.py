"""Words someone else wrote, as Claude reads them: a line saying who (from Slack's fields, never the
words), then every line behind `> `, so no text can leave its quote (docs/channels.md)."""

from __future__ import annotations

import re

from app.learning.plain_text import one_line

# At most this much of the name an integration gives itself (Slack's `username`).
MAX_CLAIMED_NAME_CHARS = 40
_BOT_ID = re.compile(r"B[A-Z0-9]{2,30}")


def quoted(text: str) -> str:
    """`text` with every one of its lines behind `> ` (an empty line: `>`)."""
    lines = text.splitlines() or [""]
    return "\n".join(f"> {line}" if line.strip() else ">" for line in lines)


def attributed(who: str, text: str, *, where: str = "", when: str = "") -> str:
    """`who` wrote `text` (`where`: " in <#C…>", `when`: " on …"): one line of Orion's,
    then the words, quoted."""
    return f"{who} wrote{where}{when}:\n{quoted(text)}"


def is_bot_id(value: object) -> bool:
    return isinstance(value, str) and _BOT_ID.fullmatch(value) is not None


def author_label(
    user: str | None,
    *,
    bot: str | None = None,
    integration: bool = False,
    claimed_name: str | None = None,
) -> str:
    """Who wrote a message, as Slack's fields say: a member or a bot by id; an integration's
    `claimed_name` (anyone holding its URL chooses it) shown as its claim, on one line."""
    if bot is not None:
        kind = "An integration" if integration else "An app"
        what = "a webhook or workflow, not a person" if integration else "not a person"
        name = _claimed(claimed_name)
        calls = f', posting as "{name}"' if name else ""
        return f"{kind} (bot {bot}: {what}{calls})"
    if user is not None:
        return f"<@{user}>"
    return "Someone Slack did not name"


def _claimed(name: str | None) -> str:
    if not name:
        return ""
    return one_line(name[: 4 * MAX_CLAIMED_NAME_CHARS], MAX_CLAIMED_NAME_CHARS).replace('"', "'")
