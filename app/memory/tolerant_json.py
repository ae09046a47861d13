"""A JSON file Orion keeps, read back whatever shape a person made it: unreadable is empty to its
reader (logged once); a writer (`object_to_update`) leaves it as it is rather than write it over."""

from __future__ import annotations

import json
from typing import Any

from app.observability.logging import get_logger

log = get_logger(__name__)

# Far above any file Orion writes (an index of a year of daily threads is ~100 KB); a
# bigger one is not parsed at all.
MAX_JSON_CHARS = 2_000_000


def load_json(content: str | None, *, what: str) -> Any | None:
    """The parsed value, or None when there is no content or it cannot be read."""
    if not content:
        return None
    if len(content) > MAX_JSON_CHARS:
        log.warning("memory.file.unreadable", file=what, reason="too_large", chars=len(content))
        return None
    try:
        return json.loads(content)
    except (ValueError, RecursionError) as exc:  # not JSON, or nested past Python's limit
        log.warning("memory.file.unreadable", file=what, reason=type(exc).__name__, exc_info=exc)
        return None


def load_json_object(content: str | None, *, what: str) -> dict[str, Any]:
    """A JSON object's items; {} for anything else (logged when it was not empty)."""
    data = load_json(content, what=what)
    if data is None or isinstance(data, dict):
        return data or {}
    log.warning("memory.file.unreadable", file=what, reason="not_an_object")
    return {}


def load_json_list(content: str | None, *, what: str) -> list[Any]:
    """A JSON array's items; [] for anything else (logged when it was not empty)."""
    data = load_json(content, what=what)
    if data is None or isinstance(data, list):
        return data or []
    log.warning("memory.file.unreadable", file=what, reason="not_a_list")
    return []


class Unreadable(ValueError):
    """A record Orion rewrites is there but cannot be read: written over as if empty, what
    it holds (erasure marks, where a person's words are) would be lost."""


def object_to_update(content: str | None, *, what: str) -> dict[str, Any]:
    """A JSON object's items, for a writer that will write it back ({} when there is
    none). Raises `Unreadable` when it is not an object."""
    data = load_json(content, what=what) if content else {}
    if not isinstance(data, dict):
        raise unreadable(what, content)
    return data


def unreadable(what: str, content: str | None) -> Unreadable:
    """The error for a record a writer cannot read whole, logged at ERROR with its size,
    never its content."""
    log.error("memory.record.unreadable", file=what, chars=len(content or ""))
    return Unreadable(what)
