"""docs/memory-notes.md shows each message shape of the memory note as Block Kit JSON,
ready to paste into Slack's Block Kit Builder: each must be exactly what the code builds,
so the page cannot drift from what people see."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.learning.memory_inventory import MemoryInventory
from app.learning.undo import NOT_YOURS, changed_since
from app.slack.conversation.memory_note_blocks import note_blocks, refusal_blocks, undone_blocks
from app.slack.home.memory_view import (
    ACTION_MEMORY_NOTES,
    ThreadLinks,
    home_view,
)

DOC = Path(__file__).resolve().parents[1] / "docs" / "memory-notes.md"
LINES = ["Saved to memory: notes/travel.md", "Updated: preferences (name)", "Deleted: old-plans.md"]
MANY = [f"Saved to memory: days/day-{n}.md" for n in range(1, 8)]
UNDO_ID = "3f9c2a7b5e1d4c8a9b0f6e2d1c3a5b7e"
_SHAPE = re.compile(r"<!-- shape: ([a-z-]+) -->\n```json\n(.*?)\n```", re.DOTALL)


def _switch(shown: bool) -> list[dict[str, Any]]:
    """The switch's block, as the Home tab shows it."""
    empty = MemoryInventory(user_id="U0DOC", preferences=[], notes=[], conversations=[])
    view = home_view("U0DOC", empty, ThreadLinks(), memory_notes=shown)
    return [
        b for b in view["blocks"] if b.get("accessory", {}).get("action_id") == ACTION_MEMORY_NOTES
    ]


BUILT: dict[str, list[dict[str, Any]]] = {
    "note": note_blocks(LINES, UNDO_ID),
    "note-many": note_blocks(MANY, UNDO_ID),
    "note-without-undo": note_blocks(LINES, None),
    "undone": undone_blocks(LINES),
    "refused-changed-since": refusal_blocks(changed_since(["notes/travel.md"])),
    "refused-not-yours": refusal_blocks(NOT_YOURS),
    "switch-on": _switch(True),
    "switch-off": _switch(False),
}


def _documented() -> dict[str, Any]:
    return {name: json.loads(raw) for name, raw in _SHAPE.findall(DOC.read_text())}


def test_the_doc_shows_every_shape_once() -> None:
    names = [name for name, _ in _SHAPE.findall(DOC.read_text())]
    assert sorted(names) == sorted(BUILT)


@pytest.mark.parametrize("name", sorted(BUILT))
def test_each_documented_shape_is_what_the_code_builds(name: str) -> None:
    assert _documented()[name] == {"blocks": BUILT[name]}


def test_the_many_files_shape_is_capped_and_says_how_many_more() -> None:
    text = BUILT["note-many"][0]["text"]["text"]
    assert text.splitlines()[-1] == "…and 2 more" and len(text.splitlines()) == 6
