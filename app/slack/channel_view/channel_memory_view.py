"""What `/orion memory` shows a channel's member (docs/channels.md, "`/orion` in a channel").
Every name and change shown was written by a member or Claude: escaped (app/slack/mrkdwn.py),
clipped, within Slack's limits (a message holds at most 50 blocks)."""

from __future__ import annotations

from typing import Any

from app.learning.channel_memory import ChannelChange, ChannelChoices, ChannelMemory
from app.learning.channel_mode import ChannelMode
from app.memory.scopes import ChannelMemoryScope, to_memory_path
from app.observability.audit import SLACK
from app.slack import block_kit
from app.slack.mrkdwn import escape_within

ACTION_FORGET_FILE = "channel_memory_forget"
ACTION_FORGET_ALL = "channel_memory_forget_all"
MAX_SHOWN_FILES = 20
MAX_SHOWN_CHANGES = 10
NAME_CHARS = 120

MODES = {
    ChannelMode.MEMORY: "answers when mentioned and remembers for this channel",
    ChannelMode.ANSWERS: "answers when mentioned and keeps nothing of this channel",
    ChannelMode.OFF: "does not answer in this channel",
}
_DONE = {
    "write": "saved",
    "delete": "deleted",
    "forget": "forgot",
    "erase": "erased",
    "archive": "set aside (archived)",
    "unarchive": "brought back",
}


def memory_blocks(
    channel_id: str,
    memory: ChannelMemory,
    choices: ChannelChoices,
    ceiling: ChannelMode,
    *,
    notice: str | None = None,
) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [block_kit.header("What Orion remembers for this channel")]
    if notice:
        blocks.append(block_kit.section(notice))
    blocks.append(block_kit.context(_mode_line(choices, ceiling)))
    root = to_memory_path(ChannelMemoryScope(channel_id).channel_root)
    if not memory.files:
        blocks.append(
            block_kit.section("Nothing yet. Mention me and ask me to remember something.")
        )
    for file in memory.files[:MAX_SHOWN_FILES]:
        path = f"{root}/{file.name}"
        change = memory.last_change_of(path)
        by = f", last changed by {_who(change)}" if change is not None else ""
        text = (
            f"*{escape_within(file.name, NAME_CHARS)}* — {block_kit.size(file.size)}, "
            f"{block_kit.date(file.updated)}{by}"
        )
        forget = block_kit.button("Forget", ACTION_FORGET_FILE, file.name)
        blocks.append({**block_kit.section(text), "accessory": forget})
    if len(memory.files) > MAX_SHOWN_FILES:
        blocks.append(block_kit.context(f"…and {len(memory.files) - MAX_SHOWN_FILES} more."))
    if memory.files:
        forget_all = block_kit.button("Forget everything", ACTION_FORGET_ALL, channel_id)
        forget_all["style"] = "danger"
        forget_all["confirm"] = {
            "title": block_kit.plain("Forget this channel's memory?"),
            "text": block_kit.mrkdwn(
                "Orion forgets every file it keeps for this channel, for everyone in it."
            ),
            "confirm": block_kit.plain("Forget everything"),
            "deny": block_kit.plain("Keep it"),
        }
        blocks.append({"type": "actions", "elements": [forget_all]})
    if memory.changes:
        blocks.append({"type": "divider"})
        lines = [_change_line(c) for c in memory.changes[:MAX_SHOWN_CHANGES]]
        blocks.append(block_kit.context("*Latest changes*\n" + "\n".join(lines)))
    return blocks


def _mode_line(choices: ChannelChoices, ceiling: ChannelMode) -> str:
    mode = choices.mode(ceiling)
    chosen = choices.channel or choices.workspace
    where = "for this channel" if choices.channel else "for the workspace"
    by = f" ({where}, chosen by <@{chosen.by}>)" if chosen is not None else ""
    return f"Orion {MODES[mode]}{by}. Admins change it with `/orion channel off|answers|memory`."


def _who(change: ChannelChange) -> str:
    return "Slack" if change.by == SLACK else f"<@{change.by}>"


def _change_line(change: ChannelChange) -> str:
    what = escape_within(change.what, NAME_CHARS)
    done = _DONE.get(change.action, change.action)
    return f"{block_kit.date(change.at)}: {_who(change)} {done} {what}"
