"""A person's choices about how Orion behaves with them: the `settings` section of their
profile (app/learning/profile.py).

Among Orion's own records, not in the person's memory directory: Claude's memory tool
cannot flip them, and they are not memories to recall. Kept until the person is
forgotten. For now one choice: whether answers carry a note of what they changed in
memory (`memory_notes`); unset, the operator's default (`MEMORY_NOTES`) holds.
"""

from __future__ import annotations

from collections.abc import Callable

from app.learning.profile import Profile

SECTION = "settings"
MEMORY_NOTES = "memory_notes"


def memory_notes_shown(profile: Profile, *, default: bool) -> bool:
    """Whether the person sees the memory note under answers."""
    settings = profile.section(SECTION)
    chosen = settings.get(MEMORY_NOTES) if isinstance(settings, dict) else None
    return chosen if isinstance(chosen, bool) else default


def choosing_memory_notes(shown: bool) -> Callable[[Profile], Profile]:
    """The change to a profile that records the choice."""

    def change(profile: Profile) -> Profile:
        settings = profile.section(SECTION)
        kept = dict(settings) if isinstance(settings, dict) else {}
        return profile.with_section(SECTION, {**kept, MEMORY_NOTES: shown})

    return change
