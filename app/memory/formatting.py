"""Render loaded memories as one Markdown block for Claude, within a token budget.

Priority when the budget is tight: the person's preferences first (they shape every
answer), then organisation-wide context, then the thread's earlier summary. Whatever
doesn't fit is cut with a visible marker, so Claude knows it saw only part of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.memory.preferences_file import read_preferences

# A rough, dependency-free estimate that errs on the safe side for English text.
CHARS_PER_TOKEN = 4
TRUNCATION_MARKER = "\n[… truncated to fit the memory budget]"


@dataclass(frozen=True)
class MemorySections:
    preferences: str | None = None
    global_context: str | None = None
    session_summary: str | None = None


def estimate_tokens(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN)


def render_preferences(raw: str) -> str:
    """The person's preferences (as preferences_file.py reads them) as a readable list."""
    preferences = read_preferences(raw)
    return "\n".join(f"- {key.replace('_', ' ')}: {value}" for key, value in preferences.items())


def format_memory_context(sections: MemorySections, *, token_budget: int) -> str | None:
    """The Markdown block for the system prompt, or None when nothing was remembered."""
    parts = [
        (
            "User preferences",
            render_preferences(sections.preferences) if sections.preferences else None,
        ),
        ("Organisation context", sections.global_context),
        ("Earlier in this thread", sections.session_summary),
    ]
    remaining = token_budget * CHARS_PER_TOKEN
    rendered: list[str] = []
    for title, body in parts:
        if not body or not body.strip():
            continue
        heading = f"## {title}\n"
        room = remaining - len(heading)
        if room <= len(TRUNCATION_MARKER):
            break
        text = body.strip()
        if len(text) > room:
            text = text[: room - len(TRUNCATION_MARKER)].rstrip() + TRUNCATION_MARKER
        section = heading + text
        rendered.append(section)
        remaining -= len(section) + 2  # the blank line between sections
    return "\n\n".join(rendered) if rendered else None
