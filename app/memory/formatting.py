"""Loaded memories as one Markdown block for Claude within a token budget, most stable section
first for the prompt cache (docs/claude-settings.md, "Tokens for budgets", "The prompt cache")."""

from __future__ import annotations

from dataclasses import dataclass

from app.memory.preferences_file import read_preferences
from app.memory.token_estimate import clip_to_tokens, estimate_tokens

TRUNCATION_MARKER = "\n[… truncated to fit the memory budget]"
# The blank line between two sections.
_SEPARATOR_TOKENS = estimate_tokens("\n\n")


@dataclass(frozen=True)
class MemorySections:
    preferences: str | None = None
    global_context: str | None = None
    session_summary: str | None = None


def render_preferences(raw: str) -> str:
    """The person's preferences (as preferences_file.py reads them) as a readable list."""
    preferences = read_preferences(raw)
    return "\n".join(f"- {key.replace('_', ' ')}: {value}" for key, value in preferences.items())


def format_memory_context(sections: MemorySections, *, token_budget: int) -> str | None:
    """The Markdown block for the system prompt, or None when nothing was remembered; its
    estimate is at most `token_budget`."""
    by_priority = [
        (
            "User preferences",
            render_preferences(sections.preferences) if sections.preferences else None,
        ),
        ("Organisation context", sections.global_context),
        ("Earlier in this thread", sections.session_summary),
    ]
    marker = estimate_tokens(TRUNCATION_MARKER)
    remaining = token_budget
    fitted: dict[str, str] = {}
    for title, body in by_priority:
        if not body or not body.strip():
            continue
        heading = f"## {title}\n"
        room = remaining - estimate_tokens(heading) - _SEPARATOR_TOKENS
        if room <= marker:
            break
        text = body.strip()
        if estimate_tokens(text) > room:
            text = clip_to_tokens(text, room - marker).rstrip() + TRUNCATION_MARKER
        section = heading + text
        fitted[title] = section
        remaining -= estimate_tokens(section) + _SEPARATOR_TOKENS
    rendered = [fitted[title] for title in _STABLE_FIRST if title in fitted]
    return "\n\n".join(rendered) if rendered else None


_STABLE_FIRST = ("Organisation context", "User preferences", "Earlier in this thread")
