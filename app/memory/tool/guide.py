"""What the system prompt tells Claude about its memory directory."""

from __future__ import annotations

from app.memory.scopes import ChannelMemoryScope, MemoryScope, to_memory_path


def memory_tool_guide(scope: MemoryScope) -> str:
    """A short paragraph for the system prompt, naming this conversation's directories."""
    user_dir = to_memory_path(scope.user_root)
    session_dir = to_memory_path(scope.session_root)
    return (
        "You have a persistent memory directory, /memories, reached through the `memory` tool. "
        "/memories/global/ holds context about the organisation, shared with everyone; it is "
        f"read-only. {user_dir} holds what you know about the person you are talking to "
        f"({scope.user_id}): preferences.json keeps their preferences as a flat JSON object, "
        "and other files there may keep anything else worth remembering about them across "
        f"conversations. {session_dir} is for notes about this conversation only. Nothing "
        "else under /memories is available to you. Before answering, when earlier context "
        "could help, view /memories first. Keep memory files short and up to date: edit or "
        "delete what is wrong or stale rather than appending contradictions, and never store "
        "secrets such as passwords or tokens."
    )


def channel_memory_guide(scope: ChannelMemoryScope) -> str:
    """The same paragraph for a conversation in a channel: the channel's directory only."""
    channel_dir = to_memory_path(scope.channel_root)
    return (
        "You have a persistent memory directory, /memories, reached through the `memory` tool. "
        "/memories/global/ holds context about the organisation; it is read-only. "
        f"{channel_dir} is this channel's memory, shared by everyone in the channel: keep "
        "there what the team tells you or decides (decisions, conventions, who owns what, "
        "anything they ask you to remember), one topic per file, and say who decided when "
        "it matters. Nothing else under /memories is available to you here: nobody's "
        "personal memory, and no other channel's. Before answering, when earlier context "
        "could help, view "
        f"{channel_dir} first. Keep memory files short and up to date: edit or delete what "
        "is wrong or stale rather than appending contradictions, and never store secrets "
        "such as passwords or tokens."
    )
