"""Scrub secret values from anything Orion emits (log lines, trace payloads).

Secrets are registered once at start-up; every string leaving through logging or tracing
passes through `redact`, so a token echoed by a library error message is still hidden.
"""

from __future__ import annotations

from collections.abc import Iterable

REDACTED = "[REDACTED]"
_secrets: tuple[str, ...] = ()


def register_secrets(values: Iterable[str]) -> None:
    global _secrets
    # Longest first so a secret containing another is replaced whole.
    _secrets = tuple(sorted({v for v in values if len(v) >= 4}, key=len, reverse=True))


def redact(value: object) -> object:
    """Return `value` with every registered secret replaced, recursing into containers."""
    if not _secrets:
        return value
    if isinstance(value, str):
        for secret in _secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {key: redact(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact(item) for item in value)
    return value
