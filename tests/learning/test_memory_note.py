"""The note's words: one line per file, named as the person finds it, capped."""

from __future__ import annotations

import json

from app.learning.memory_note import describe_changes, shown_lines
from app.memory.change_log import MemoryChange
from app.memory.homes import person

# What the turn's change log holds: the keys in the person's home, where the memory
# tool's `/memories/users/…` and `/memories/sessions/…` live.
USER = "U0NOTE1"
OWN = person(USER).memory_prefix
THREAD_DIR = person(USER).notes_prefix("1712345678.000100")


def _lines(*changes: MemoryChange) -> list[str]:
    return [str(line) for line in describe_changes(USER, changes)]


def test_each_kind_of_change_reads_as_the_person_would_say_it() -> None:
    assert _lines(
        MemoryChange(f"{OWN}notes/travel.md", None, "Lisbon\n", 1),
        MemoryChange(f"{OWN}plan.md", "old\n", "new\n", 2),
        MemoryChange(f"{OWN}old.md", "gone\n", None, None),
        MemoryChange(f"{THREAD_DIR}todo.md", None, "x\n", 3),
    ) == [
        "Saved to memory: notes/travel.md",
        "Updated: plan.md",
        "Deleted: old.md",
        "Saved to memory: todo.md (this conversation)",
    ]


def test_a_rename_is_one_line_and_a_delete_beside_it_stays_a_delete() -> None:
    assert _lines(
        MemoryChange(f"{OWN}a.md", "same\n", None, None),
        MemoryChange(f"{OWN}other.md", "different\n", None, None),
        MemoryChange(f"{OWN}trips/a.md", None, "same\n", 4),
    ) == ["Deleted: other.md", "Moved: a.md → trips/a.md"]


def test_preferences_name_what_changed_not_their_bookkeeping() -> None:
    before = json.dumps({"name": "Sam", "language": "French", "_learned": {"name": {}}})
    after = json.dumps({"name": "Samuel", "language": "French", "response_style": "short"})
    key = f"{OWN}preferences.json"
    assert _lines(MemoryChange(key, before, after, 5)) == [
        "Updated: preferences (name, response style)"
    ]
    assert _lines(MemoryChange(key, None, after, 5)) == [
        "Saved to memory: preferences (name, language, response style)"
    ]


def test_a_long_note_shows_five_lines_then_counts_the_rest_each_clipped() -> None:
    lines = [f"Saved to memory: {'x' * 300}-{n}.md" for n in range(8)]
    shown = shown_lines(lines)
    assert len(shown) == 6 and shown[-1] == "…and 3 more"
    assert all(len(line) <= 200 for line in shown) and shown[0].endswith("…")
