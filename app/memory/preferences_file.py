"""A person's preferences file as every reader sees it, by one rule, so that none shows a preference
another hides (docs/memory-controls.md); app/learning/preferences.py writes it."""

from __future__ import annotations

import json
from typing import Any

from app.memory.tolerant_json import load_json_object

BOOKKEEPING_MARK = "_"


def load_preferences_object(raw: str | None) -> dict[str, Any]:
    """The file's JSON object, bookkeeping included; {} when it holds none."""
    return load_json_object(raw, what="preferences")


def is_bookkeeping(key: str) -> bool:
    return key.startswith(BOOKKEEPING_MARK)


def preferences_in(data: dict[str, Any]) -> dict[str, str]:
    """The preferences of a loaded file, each value as text, in the file's order."""
    return {
        key: value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        for key, value in data.items()
        if not is_bookkeeping(key)
    }


# What of a person's preferences may shape Orion's answers to them in a channel: how they
# like answers, nothing about them (a name, a team, a timezone, a rule they set).
SHAPING_KEYS = ("language", "response_style")
SHAPING_VALUE_CHARS = 120


def shaping_preferences(raw: str | None) -> str | None:
    """The preferences file reduced to SHAPING_KEYS (each value cut short), as a file of
    its own; None when it holds none of them."""
    if raw is None:
        return None
    kept = {
        key: value[:SHAPING_VALUE_CHARS]
        for key, value in read_preferences(raw).items()
        if key in SHAPING_KEYS
    }
    return json.dumps(kept, ensure_ascii=False) if kept else None


def read_preferences(raw: str | None) -> dict[str, str]:
    """The preferences in a file's text, each value as text, in the file's order."""
    return preferences_in(load_preferences_object(raw))
