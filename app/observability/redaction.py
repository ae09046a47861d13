"""Scrub secrets from anything Orion emits or keeps.

Two kinds of scrubbing, for two kinds of secret:

- Orion's own secrets (its tokens and keys), registered once at start-up: every string
  leaving through logging or tracing passes through `redact`, so a token echoed by a
  library error message is still hidden.
- Anybody's secrets, recognised by their shape (`SECRET_SHAPES`): a person pasting a token
  or a password into a conversation must not have it kept in memory, where it would be
  read back into later prompts, exports and the Home tab. `redact_secret_shapes` replaces
  each with `[redacted]`; the memory store applies it to every write
  (app/memory/secret_free_store.py).

This module is the one list of those shapes; it imports nothing of Orion's, so any layer
may use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

REDACTED = "[REDACTED]"
# What a secret found by its shape becomes in stored text.
SHAPE_REDACTED = "[redacted]"
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


# --- secrets recognised by their shape ---------------------------------------------------


def _token(prefix: str, rest: str) -> str:
    """A secret that starts with the literal `prefix`, not run on from a longer word
    (`task-…` holds no `sk-` key). The check follows the prefix, so that the regex engine
    can look for the prefix quickly."""
    literal = re.escape(prefix)
    return f"{literal}(?<![A-Za-z0-9_-]{literal}){rest}"


# Characters a fixed-length key may not run on into.
_END = r"(?![A-Za-z0-9_-])"


@dataclass(frozen=True)
class SecretShape:
    """One kind of secret: the pattern of the secret itself, and literals one of which
    every such secret contains (`anchors`; in lower case and compared without regard to
    case when `ignore_case`), so that text without any of them is not searched at all.
    A `labelled` shape keeps its label and quotes and replaces only the value
    (`password: [redacted]`).
    """

    name: str
    anchors: tuple[str, ...]
    pattern: re.Pattern[str]
    labelled: bool = False
    ignore_case: bool = False

    def may_occur_in(self, text: str, lowered: str) -> bool:
        haystack = lowered if self.ignore_case else text
        return any(anchor in haystack for anchor in self.anchors)


def _labelled(name: str, label: str, anchors: tuple[str, ...]) -> SecretShape:
    # Only an explicit `label: value` or `label=value` counts ("the password reset flow" is
    # kept): after the label, closing quotes or emphasis (`"password": …`, `**Password:**`),
    # then `:` or `=` on the same line. A quoted value (JSON escapes allowed) keeps its
    # quotes, so JSON stays JSON; an unquoted one ends before the sentence does. The blanks
    # around the emphasis are possessive (`*+`): a value never starts with one, and two
    # runs that may meet would otherwise be tried at every split of a long run of blanks.
    pattern = (
        rf"(?P<label>(?<![A-Za-z0-9]){label}[\"'*]*[ \t]*[:=][ \t]*+\**[ \t]*+)"
        r"(?P<value>\"(?:[^\"\\\n]|\\.)+\"|'(?:[^'\\\n]|\\.)+'|[^\s\"',;&<>]*[^\s\"',;&<>.!?)])"
    )
    return SecretShape(
        name, anchors, re.compile(pattern, re.IGNORECASE), labelled=True, ignore_case=True
    )


# In the order they are applied: a private key's base64 must go whole, before any of it
# could pass for something shorter. Shapes are specific on purpose: a key's prefix plus a
# run of key characters long enough not to be a word (`xoxb-` alone, as in "a token
# starting with xoxb-", is kept).
SECRET_SHAPES: tuple[SecretShape, ...] = (
    # PEM private keys (RSA, EC, OpenSSH, PKCS#8, PGP), also inside a JSON string such as a
    # service-account key's "private_key" (newlines escaped as `\n`), and cut-off ones
    # (their base64 lines, not the prose after them).
    SecretShape(
        "private_key",
        ("PRIVATE KEY",),
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:(?:[^-]|-(?!----))*+-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            r"|(?:(?:\s|\\n)+[A-Za-z0-9+/=]{16,})*)"
        ),
    ),
    # Header and payload are base64url JSON (`eyJ` is `{"`); the signature may be empty.
    SecretShape(
        "jwt",
        ("eyJ",),
        re.compile(_token("eyJ", r"[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*")),
    ),
    # Bot, user, app-configuration, refresh... tokens (`xoxe.xoxp-…` when rotated).
    SecretShape(
        "slack_token", ("xox",), re.compile(_token("xox", r"(?:e\.xox)?[abprse]-[A-Za-z0-9-]{8,}"))
    ),
    SecretShape("slack_app_token", ("xapp-",), re.compile(_token("xapp-", r"[A-Za-z0-9-]{8,}"))),
    # Anthropic (`sk-ant-…`); OpenAI (`sk-…`, `sk-proj-…`, `sk-svcacct-…`): with a digit,
    # so that a long hyphenated slug is kept.
    SecretShape(
        "api_key", ("sk-",), re.compile(_token("sk-", r"(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{20,}"))
    ),
    SecretShape(
        "aws_access_key_id",
        ("AKIA", "ASIA"),
        re.compile(r"A[KS]IA(?<![A-Za-z0-9_-]A[KS]IA)[A-Z0-9]{16}" + _END),
    ),
    SecretShape("gcp_api_key", ("AIza",), re.compile(_token("AIza", r"[A-Za-z0-9_-]{35}" + _END))),
    _labelled("aws_secret_access_key", "aws_secret_access_key", ("aws_secret_access_key",)),
    _labelled("password", r"(?:passw(?:or)?d|passphrase)", ("passw", "passphrase")),
)


def redact_secret_shapes(text: str, replacement: str = SHAPE_REDACTED) -> str:
    """`text` with every secret of a known shape (`SECRET_SHAPES`) replaced.

    Text without secrets comes back unchanged; scrubbing twice changes nothing more than
    scrubbing once. Cheap when there is nothing to find: a shape's pattern runs only when
    its anchor is in the text.
    """
    lowered = text.lower()
    if not _may_hold_a_secret(lowered):
        return text  # most text: one lower-casing and a few substring searches
    for shape in SECRET_SHAPES:
        if not shape.may_occur_in(text, lowered):
            continue
        if shape.labelled:
            scrubbed = shape.pattern.sub(lambda match: _relabelled(match, replacement), text)
        else:
            scrubbed = shape.pattern.sub(replacement, text)
        if scrubbed != text:
            text, lowered = scrubbed, scrubbed.lower()
    return text


# Every shape's anchors, in lower case: text holding none of them holds no secret.
_ANY_ANCHOR = tuple(sorted({anchor.lower() for shape in SECRET_SHAPES for anchor in shape.anchors}))


def _may_hold_a_secret(lowered: str) -> bool:
    return any(anchor in lowered for anchor in _ANY_ANCHOR)


def _relabelled(match: re.Match[str], replacement: str) -> str:
    value = match.group("value")
    quote = value[0] if value[0] in "\"'" else ""
    return f"{match.group('label')}{quote}{replacement}{quote}"
