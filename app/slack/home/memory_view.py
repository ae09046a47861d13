"""The Home tab's view, pure: an inventory as Block Kit within Slack's limits, lists cut and values
clipped. A button's value names only the item; whose it is comes from the click."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.learning.memory_inventory import Conversation, MemoryInventory, Note
from app.learning.plain_text import clip
from app.learning.preferences import StoredPreference
from app.memory.homes import person
from app.slack import block_kit
from app.slack.conversation.thread_links import ThreadLinks
from app.slack.mrkdwn import escape

CALLBACK_ID = "orion_memory_home"
ACTION_FORGET_PREFERENCE = "memory.forget_preference"
ACTION_FORGET_NOTE = "memory.forget_note"
ACTION_FORGET_CONVERSATION = "memory.forget_conversation"
ACTION_FORGET_EVERYTHING = "memory.forget_everything"
ACTION_DOWNLOAD = "memory.download"
ACTION_MEMORY_NOTES = "memory.notes_switch"
NOTES_HIDE, NOTES_SHOW = "hide", "show"

# What one view shows of each list; the rest is counted, and the download has it all.
MAX_PREFERENCES = 20
MAX_NOTES = 15
MAX_CONVERSATIONS = 15

# Slack's limits (Block Kit reference).
MAX_BLOCKS = 100
BUTTON_VALUE_CHARS = 2_000
# Ours: enough to recognise an item; the download has it whole.
VALUE_CHARS = 300
TITLE_CHARS = 150
SUMMARY_CHARS = 280

NOTHING_KEPT = (
    "Orion doesn't remember anything about you yet. As you talk with it, the preferences "
    "it learns, the notes it keeps and the conversations it summarises will show up here."
)
NOTES_ON = (
    "*Memory notes: on.* When an answer saves, changes or deletes something Orion "
    "remembers, a short note under it says what, with an Undo."
)
NOTES_OFF = (
    "*Memory notes: off.* Answers don't say what they saved; everything Orion remembers "
    "is still listed here."
)
# What of theirs is in channels: the threads are the channels', their messages theirs.
CHANNEL_THREADS = (
    "You wrote in {count} channel thread(s) where Orion was mentioned. Forget everything "
    "takes your messages out of them; what each channel decided stays the channel's "
    "(its members see and forget it with `/orion memory`)."
)
MEMORY_OFF = "Memory is switched off for this workspace: Orion keeps nothing about you."
UNAVAILABLE = (
    "Orion can't reach its memory right now, so it can't show what it remembers about "
    "you. Please try again in a few minutes."
)


def home_view(
    user: str,
    inventory: MemoryInventory,
    links: ThreadLinks,
    *,
    conversations_total: int | None = None,
    notice: str | None = None,
    memory_notes: bool = True,
) -> dict[str, Any]:
    """Everything in `inventory`, grouped; `conversations_total`: how many conversations
    the person has in all (the inventory may hold only the newest); `memory_notes`:
    whether their answers carry the memory note (their switch)."""
    blocks = _top(notice)
    if inventory.empty:
        blocks += [block_kit.section(NOTHING_KEPT), _notes_switch(memory_notes)]
        return _view(blocks)
    blocks += [_controls(), _notes_switch(memory_notes)]
    if inventory.channel_threads:
        blocks.append(block_kit.context(CHANNEL_THREADS.format(count=inventory.channel_threads)))
    total = max(conversations_total or 0, len(inventory.conversations))
    groups = (
        ("Preferences", inventory.preferences, MAX_PREFERENCES, len(inventory.preferences)),
        ("Notes", inventory.notes, MAX_NOTES, len(inventory.notes)),
        ("Recent conversations", inventory.conversations, MAX_CONVERSATIONS, total),
    )
    for title, items, limit, count in groups:
        blocks += [{"type": "divider"}, block_kit.header(f"{title} ({count})")]
        shown: Sequence[object] = items[:limit]
        for n, item in enumerate(shown):
            blocks.append(_item(user, n, item, links))
        if not items:
            blocks.append(block_kit.context("None."))
        elif count > len(shown):
            more = count - len(shown)
            blocks.append(
                block_kit.context(f"…and {more} more. *Download my memory* lists them all.")
            )
    return _view(blocks[:MAX_BLOCKS])


def message_view(text: str, *, notice: str | None = None) -> dict[str, Any]:
    """A view with nothing but a message (memory off, storage unavailable)."""
    return _view([*_top(notice), block_kit.section(text)])


# --- blocks ------------------------------------------------------------------------------


def _top(notice: str | None) -> list[dict[str, Any]]:
    blocks = [
        block_kit.header("What Orion remembers about you"),
        block_kit.context(
            "Only you see this page. Forget anything you'd rather Orion didn't keep, "
            "or download a copy of all of it."
        ),
    ]
    if notice:
        blocks.append(block_kit.section(notice))
    return blocks


def _controls() -> dict[str, Any]:
    forget_all = block_kit.button(
        "Forget everything Orion knows about me", ACTION_FORGET_EVERYTHING, "everything"
    )
    forget_all["style"] = "danger"
    forget_all["confirm"] = {
        "title": block_kit.plain("Forget everything?"),
        "text": block_kit.mrkdwn(
            "Orion will permanently delete your preferences, its notes about you, the "
            "summaries of your conversations and what you wrote in channel threads. This "
            "can't be undone."
        ),
        "confirm": block_kit.plain("Forget everything"),
        "deny": block_kit.plain("Cancel"),
        "style": "danger",
    }
    download = block_kit.button("Download my memory", ACTION_DOWNLOAD, "download")
    download["style"] = "primary"
    return {"type": "actions", "block_id": "memory_controls", "elements": [download, forget_all]}


def _notes_switch(shown: bool) -> dict[str, Any]:
    """The person's switch for the note under answers that changed memory."""
    if shown:
        text, label, value = NOTES_ON, "Hide these notes", NOTES_HIDE
    else:
        text, label, value = NOTES_OFF, "Show these notes", NOTES_SHOW
    block = block_kit.section(text, block_id="memory_notes_switch")
    block["accessory"] = block_kit.button(label, ACTION_MEMORY_NOTES, value)
    return block


def _item(user: str, n: int, item: object, links: ThreadLinks) -> dict[str, Any]:
    if isinstance(item, StoredPreference):
        return _preference(n, item, links)
    if isinstance(item, Note):
        return _note(user, n, item)
    assert isinstance(item, Conversation)
    return _conversation(n, item, links)


def _preference(n: int, item: StoredPreference, links: ThreadLinks) -> dict[str, Any]:
    name = item.key.replace("_", " ").capitalize()
    shown_name = escape(clip(name, TITLE_CHARS))
    lines = [f"*{shown_name}*: {escape(clip(item.value, VALUE_CHARS))}"]
    learned = item.learned
    if learned is not None:
        where = ""
        link = links.to(learned.channel, learned.thread_ts)
        if link:
            where = f" in <{link}|this conversation>"
        lines.append(f"Learned {block_kit.date(learned.at)}{where}")
    else:
        lines.append("When it was learned is not recorded")
    return _forgettable(f"preference-{n}", lines, ACTION_FORGET_PREFERENCE, item.key)


def _note(user: str, n: int, note: Note) -> dict[str, Any]:
    name = note.key.removeprefix(person(user).memory_prefix)
    lines = [
        f"*{escape(clip(name, TITLE_CHARS))}*",
        f"{block_kit.size(note.size)} · changed {block_kit.date(note.updated)}",
    ]
    if note.preview.strip():
        preview = escape(clip(note.preview, SUMMARY_CHARS))
        lines.append("\n".join(f"> {line}" for line in preview.splitlines()))
    return _forgettable(f"note-{n}", lines, ACTION_FORGET_NOTE, name)


def _conversation(n: int, conversation: Conversation, links: ThreadLinks) -> dict[str, Any]:
    when = block_kit.date(conversation.updated)
    link = links.to(conversation.channel, conversation.thread_ts)
    if link:
        when += f" · <{link}|open the conversation>"
    lines = [f"*{escape(clip(conversation.title, TITLE_CHARS))}*", when]
    if conversation.summary:
        first = next((line for line in conversation.summary.splitlines() if line.strip()), "")
        lines.append(f"> {escape(clip(first, SUMMARY_CHARS))}")
    value = conversation.thread_ts
    return _forgettable(f"conversation-{n}", lines, ACTION_FORGET_CONVERSATION, value)


def _forgettable(block_id: str, lines: list[str], action_id: str, value: str) -> dict[str, Any]:
    block = block_kit.section("\n".join(lines), block_id=block_id)
    if len(value) <= BUTTON_VALUE_CHARS:  # else it can't be named: the download still has it
        block["accessory"] = block_kit.button("Forget", action_id, value)
    return block


def _view(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "home", "callback_id": CALLBACK_ID, "blocks": blocks}
