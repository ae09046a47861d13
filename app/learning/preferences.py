"""A person's preferences file, `users/{user_id}/preferences.json`.

A flat JSON object with stable keys (`name`, `timezone`, `team`, `language`,
`response_style`, `prefers`, `always`, `never`): a later statement on the same topic
replaces the earlier one, except `always` / `never`, which keep the few most recent rules.
What is found in messages comes from preference_detection.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from app.memory.scopes import user_preferences_key
from app.storage.store import ObjectStore, update

MAX_VALUE_CHARS = 160
# `always` / `never` hold several rules, newest last, joined with RULE_SEPARATOR.
MAX_RULES = 5
RULE_SEPARATOR = "; "
RULE_KEYS = ("always", "never")


@dataclass(frozen=True)
class Preference:
    key: str
    value: str


# --- the file --------------------------------------------------------------------------


def merge_preferences(current: str | None, found: Sequence[Preference]) -> str | None:
    """`current` (the JSON text, or None) with `found` merged in (`current` itself when
    that changes nothing).

    Raises ValueError when the stored file is not a JSON object: it is left for a person
    (or Claude) to fix rather than silently replaced.
    """
    if not found:
        return current
    data: dict[str, object] = {}
    if current is not None and current.strip():
        parsed = json.loads(current)
        if not isinstance(parsed, dict):
            raise ValueError("preferences.json is not a JSON object")
        data = parsed
    merged = dict(data)
    for preference in found:
        if preference.key in RULE_KEYS:
            _add_rule(merged, preference)
        else:
            merged[preference.key] = preference.value
    if merged == data and current is not None:
        return current
    return json.dumps(merged, ensure_ascii=False, indent=2)


def _add_rule(data: dict[str, object], preference: Preference) -> None:
    """Append a rule; a rule said again moves to the end; its opposite is withdrawn."""
    opposite = "never" if preference.key == "always" else "always"
    rule = preference.value
    for key in (preference.key, opposite):
        existing = data.get(key)
        rules = _rules(existing)
        kept = [r for r in rules if r.casefold() != rule.casefold()]
        if key == preference.key:
            kept = [*kept, rule][-MAX_RULES:]
        if kept:
            data[key] = RULE_SEPARATOR.join(kept)
        elif key in data and existing is not None:
            del data[key]


def _rules(value: object) -> list[str]:
    if isinstance(value, str):
        return [r.strip() for r in value.split(RULE_SEPARATOR) if r.strip()]
    if isinstance(value, list):
        return [str(r).strip() for r in value if str(r).strip()]
    return []


async def save_preferences(store: ObjectStore, user_id: str, found: Sequence[Preference]) -> bool:
    """Merge `found` into the person's preferences.json; True when the file changed."""
    if not found:
        return False
    changed = False

    def transform(current: str | None) -> str | None:
        nonlocal changed
        merged = merge_preferences(current, found)
        changed = merged != current
        return merged

    await update(store, user_preferences_key(user_id), transform)
    return changed
