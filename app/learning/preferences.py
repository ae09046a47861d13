"""A person's preferences file (`memory/preferences.json`): a flat JSON object, the latest statement
of a kind winning, `_learned` saying when and where (docs/memory-controls.md)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from app.learning.language_names import canonical_language
from app.learning.timestamps import format_time, parse_time
from app.memory.homes import preferences_key
from app.memory.preferences_file import is_bookkeeping, load_preferences_object, preferences_in
from app.memory.retention import cutoff_of
from app.storage.store import NOT_READ, NotRead, ObjectStore, StoredObject, update

MAX_VALUE_CHARS = 160
# `always` / `never` hold several rules, newest last, joined with RULE_SEPARATOR.
MAX_RULES = 5
RULE_SEPARATOR = "; "
RULE_KEYS = ("always", "never")
LEARNED_KEY = "_learned"


@dataclass(frozen=True)
class Preference:
    key: str
    value: str
    # The canonical name of the language it was stated in ("French"), when known: where it
    # was said, not what it is, so two statements of one preference are equal whatever
    # their language.
    said_in: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Learned:
    """When and where a preference was (last) stated."""

    at: datetime
    channel: str | None = None
    thread_ts: str | None = None
    said_in: str | None = None  # the language it was stated in, as Preference.said_in

    def to_json(self) -> dict[str, str]:
        item = {"at": format_time(self.at)}
        if self.channel and self.thread_ts:
            item |= {"channel": self.channel, "thread": self.thread_ts}
        if self.said_in:
            item["said_in"] = self.said_in
        return item


@dataclass(frozen=True)
class StoredPreference:
    """One preference as the person's file holds it."""

    key: str
    value: str
    learned: Learned | None


def parse_preferences(raw: str | None, *, cutoff: datetime | None = None) -> list[StoredPreference]:
    """The preferences in a file's text, in its order; a broken file reads as none. A
    thread learned in before `cutoff` is left out."""
    data = load_preferences_object(raw)
    sources = data.get(LEARNED_KEY)
    sources = sources if isinstance(sources, dict) else {}
    return [
        StoredPreference(key, shown, _learned(sources.get(key), cutoff))
        for key, shown in preferences_in(data).items()
    ]


def spoken_language(raw: str | None) -> str | None:
    """The language to speak to the person in, by canonical name: the language they asked
    for ("language": "Französisch" is "French"), else the one they last stated a
    preference in ("Appelle-moi Camille" is French); None when neither is known."""
    stored = parse_preferences(raw)
    for preference in stored:
        if preference.key == "language" and (asked := canonical_language(preference.value)):
            return asked
    said = [p.learned for p in stored if p.learned is not None and p.learned.said_in]
    latest = max(said, key=lambda learned: learned.at, default=None)
    # Canonical again: the file is also written by Claude's memory tool.
    return canonical_language(latest.said_in) if latest and latest.said_in else None


# --- the file --------------------------------------------------------------------------


def merge_preferences(
    current: str | None,
    found: Sequence[Preference],
    learned: Learned | None = None,
    *,
    cutoff: datetime | None = None,
) -> str | None:
    """`current` with `found` merged in, each changed key with its `learned`, threads from before
    `cutoff` dropped. ValueError for a file that is not a JSON object: left for a person to fix."""
    if not found:
        return current
    data: dict[str, object] = {}
    if current is not None and current.strip():
        try:
            parsed = json.loads(current)
        except RecursionError:
            raise ValueError("preferences.json is nested too deeply") from None
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
    if learned is not None:
        sources = merged.get(LEARNED_KEY)
        sources = dict(sources) if isinstance(sources, dict) else {}
        said_in = {preference.key: preference.said_in for preference in found}
        for key in merged:
            if not is_bookkeeping(key) and merged[key] != data.get(key):
                sources[key] = replace(learned, said_in=said_in.get(key)).to_json()
            elif (kept := _learned(sources.get(key), cutoff)) is not None:
                sources[key] = kept.to_json()
        merged.pop(LEARNED_KEY, None)
        merged[LEARNED_KEY] = {key: sources[key] for key in merged if key in sources}
    return json.dumps(merged, ensure_ascii=False, indent=2)


def without_preference(current: str | None, key: str) -> str | None:
    """`current` without the preference `key` (and its record); `current` if it has none."""
    data = load_preferences_object(current)
    if is_bookkeeping(key) or key not in data:
        return current
    del data[key]
    sources = data.get(LEARNED_KEY)
    if isinstance(sources, dict):
        data[LEARNED_KEY] = {k: v for k, v in sources.items() if k != key}
    return json.dumps(data, ensure_ascii=False, indent=2)


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


async def save_preferences(
    store: ObjectStore,
    user_id: str,
    found: Sequence[Preference],
    *,
    channel: str | None = None,
    thread_ts: str | None = None,
    now: datetime | None = None,
    already_read: StoredObject | NotRead | None = NOT_READ,
) -> bool:
    """Merge `found` into the person's preferences.json, learned now in that thread; True
    when the file changed. `already_read`: the file as the turn read it (it is then not
    read again, unless another writer changed it since)."""
    if not found:
        return False
    changed = False
    learned = Learned(now or datetime.now(UTC), channel, thread_ts)
    cutoff = cutoff_of(store)

    def transform(current: str | None) -> str | None:
        nonlocal changed
        merged = merge_preferences(current, found, learned, cutoff=cutoff)
        changed = merged != current
        return merged

    await update(store, preferences_key(user_id), transform, already_read=already_read)
    return changed


def _learned(item: object, cutoff: datetime | None = None) -> Learned | None:
    if not isinstance(item, dict) or not isinstance(item.get("at"), str):
        return None
    at = parse_time(item["at"])
    if at is None:
        return None
    said_in = item.get("said_in")
    said_in = said_in if isinstance(said_in, str) else None
    if cutoff is not None and at < cutoff:
        # Its conversation has expired: when (and in which language), no longer where.
        return Learned(at, said_in=said_in)
    channel, thread = item.get("channel"), item.get("thread")
    return Learned(
        at,
        channel if isinstance(channel, str) else None,
        thread if isinstance(thread, str) else None,
        said_in,
    )
