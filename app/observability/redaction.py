"""Scrub secrets from anything Orion emits or keeps.

Two kinds of scrubbing, for two kinds of secret:

- Orion's own secrets (its tokens and keys), registered once at start-up: every string
  leaving through logging or tracing passes through `redact`, so a token echoed by a
  library error message is still hidden.
- Anybody's secrets, recognised by their shape (`SECRET_SHAPES`): a person pasting a token
  or a password into a conversation must not have it kept in memory, where it would be
  read back into later prompts, exports and the Home tab, nor sent to Langfuse.
  `redact_secret_shapes` replaces each with `[redacted]`; the memory store applies it to
  every write (app/memory/secret_free_store.py), the memory tool refuses file names that
  hold one, and Langfuse's mask applies both kinds to everything traced
  (`redact_everything`, installed by app/observability/tracing.py).

This module is the one list of those shapes; it imports nothing of Orion's outside
app/observability, so any layer may use it. A well-known scanner (detect-secrets) was
considered and not used: it reports secrets per line rather than where they are, pulls
in requests and PyYAML, and its keyword patterns backtrack (over three minutes on
36,000 characters of `password_` repeated).
"""

from __future__ import annotations

import base64
import re
import string
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import cast

from app.observability.invisible_text import VisibleText

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


def _word(label: str) -> str:
    """`label` (in lower case) as a whole word or the end of a longer name: `bearer`,
    `DB_PASSWORD`, but not `Bearerx` or `mypassword`. As `_token`, checked after the
    literal is found."""
    literal = re.escape(label)
    return f"{literal}(?<![A-Za-z0-9]{literal})"


# Characters a fixed-length key may not run on into.
_END = r"(?![A-Za-z0-9_-])"


@dataclass(frozen=True)
class SecretShape:
    """One kind of secret: its pattern, and literals one of which every such secret
    contains (`anchors`), so that text without any of them is not searched at all. When
    `ignore_case`, pattern and anchors are written in lower case and look at the text in
    lower case: a case-sensitive pattern finds its literals far faster than `re.IGNORECASE`.

    When the pattern has a group named `value`, only that group is the secret: a label
    (`password: `, `https://user:`) stays, and so do the quotes around a quoted value.
    `confirm`, when set, is asked about each value found and may turn it down (a Basic
    credential must decode to `user:password`; `password=password` is code, not a secret).

    Every pattern is linear in the length of the text: possessive or mutually exclusive
    quantifiers only, never two that could share characters next to each other.
    """

    name: str
    anchors: tuple[str, ...]
    pattern: re.Pattern[str]
    ignore_case: bool = False
    confirm: Callable[[str], bool] | None = None

    def may_occur_in(self, text: str, anchors_in_text: frozenset[str]) -> bool:
        """Whether `text` holds one of this shape's anchors, given the lower-cased
        anchors it holds (each anchor is looked for once, for all shapes)."""
        if anchors_in_text.isdisjoint(anchor.lower() for anchor in self.anchors):
            return False
        return self.ignore_case or any(anchor in text for anchor in self.anchors)

    def secret_spans(self, text: str, lowered: str) -> Iterator[tuple[int, int]]:
        """Where the secrets of this shape are in `text`: (start, end) of each.

        `lowered` is `text` in lower case, character for character."""
        has_value = "value" in self.pattern.groupindex
        for match in self.pattern.finditer(lowered if self.ignore_case else text):
            start, end = match.span("value") if has_value else match.span()
            if end - start >= 2 and text[start] in "\"'" and text[end - 1] == text[start]:
                start, end = start + 1, end - 1  # a quoted value keeps its quotes
            elif has_value:
                while end > start and text[end - 1] in ".!?":
                    end -= 1  # the end of the sentence, not of the value
            if end > start and (self.confirm is None or self.confirm(text[start:end])):
                yield start, end


# A label, closing quotes or emphasis after it (`"password": …`, `**Password:**`), then
# `:`, `=` or `:=` on the same line, and the value: quoted (JSON escapes allowed; at most
# 1,000 characters, so that an unclosed quote is not searched to the end of the text), or
# one word. A word followed by `(`, `[` or `{` is code (`password = getpass()`). A `&`
# belongs to the word: a password may hold one, and redacting the rest of a query string
# with it loses nothing that matters.
_LABEL_THEN_VALUE = (
    r"[\"'*]*+[ \t]*+(?::=|[:=])[ \t]*+(?:\*++[ \t]*+)?"
    r"(?P<value>\"(?:[^\"\\\n]|\\.){1,1000}+\"|'(?:[^'\\\n]|\\.){1,1000}+'"
    r"|[^\s\"',;<>(){}\[\]]++(?![(\[{]))"
)
# What a labelled value may be without being a secret: a placeholder or template
# (`$DB_PASSWORD`, `%s`, `${…}`), a literal, type or keyword of some language
# (`if not password: raise …`), or a reference to the secret by name
# (`password=password`, `api_key = settings.api_key`).
_NOT_SECRETS = frozenset(
    {
        *("none", "null", "nil", "true", "false", "undefined"),
        *("str", "string", "bytes", "secretstr"),
        *("raise", "return", "continue", "break", "pass", "yield", "await"),
    }
)
_CREDENTIAL_WORDS = ("pass", "pwd", "secret", "key", "token")
# Names a variable holding a secret goes by, whole.
_LABEL_WORDS = frozenset(
    {
        *("password", "passwd", "pwd", "passphrase", "pass", "secret", "token", "key"),
        *("api_key", "apikey", "secret_key", "client_secret", "access_token", "auth_token"),
    }
)
_IDENTIFIER_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+(?:\.[A-Za-z_][A-Za-z0-9_]*+)*+")


def _not_a_placeholder(value: str) -> bool:
    return value[:1] not in ("$", "%", "{")


def _is_a_value(value: str) -> bool:
    """A labelled value that is a secret, rather than a placeholder, literal or the name
    of a variable holding it."""
    if not _not_a_placeholder(value) or value.lower() in _NOT_SECRETS:
        return False
    if _IDENTIFIER_PATH.fullmatch(value):
        last = value.rsplit(".", 1)[-1].lower()
        is_a_name = "." in value or last.strip("_") in _LABEL_WORDS
        if is_a_name and any(word in last for word in _CREDENTIAL_WORDS):
            return False
    return True


def _labelled(
    name: str,
    labels: tuple[str, ...],
    anchors: tuple[str, ...],
    confirm: Callable[[str], bool] = _is_a_value,
) -> SecretShape:
    """A value after one of `labels` (whole words in lower case, matched in any case;
    `DB_PASSWORD=` counts). Each label contains one of `anchors`.

    Only an explicit `label: value` or `label=value` counts ("the password reset flow",
    "the password policy: 12 characters" are kept). Longest label first.
    """
    words = "|".join(_word(label) for label in sorted(labels, key=len, reverse=True))
    pattern = re.compile(f"(?:{words}){_LABEL_THEN_VALUE}")
    return SecretShape(name, anchors, pattern, ignore_case=True, confirm=confirm)


def _looks_random(value: str) -> bool:
    """A bearer token, not a word ("Bearer responsibilities"): letters and digits."""
    return any(char.isdigit() for char in value) and any(char.isalpha() for char in value)


def _is_basic_credentials(value: str) -> bool:
    """Base64 of `user:password` in readable text, as HTTP Basic authentication sends it
    ("Basic instructions" is not)."""
    if len(value) % 4:
        return False  # not base64: cheaper to tell than to try
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


# Between the words of a PEM header, and between the lines of its base64: any white space,
# or `\n` as a JSON string escapes it (a service-account key's "private_key").
_PEM_GAP = r"(?:[ \t\r\n]|\\[rn])"


def _pem_boundary(word: str) -> str:
    """`-----BEGIN RSA PRIVATE KEY-----` (`word` is BEGIN or END), also with its words on
    several lines or with extra spaces. At most five dashes either side, so that a run of
    dashes is not scanned again from each of its dashes, and a header does not run on
    into the next one."""
    boundary = r"-{3,5}+[ \t]*+WORD(?:GAP++[A-Z0-9]++){0,3}GAP++PRIVATEGAP++KEY"
    return boundary.replace("GAP", _PEM_GAP).replace("WORD", word) + (
        r"(?:" + _PEM_GAP + r"++BLOCK)?+[ \t]*+-{3,5}+"
    )


_STRIPE_KEY_PREFIXES = ("sk_live_", "rk_live_", "sk_test_", "rk_test_")

# Every kind of secret Orion recognises by its shape. Specific on purpose: a key's prefix
# plus a run of key characters long enough not to be a word (`xoxb-` alone, as in "a token
# starting with xoxb-", is kept); a labelled value only after an explicit label. Each has
# its tests in tests/observability/test_secret_shapes.py, one that it is found and one
# that ordinary text (prose, code, hashes, ids) is not.
SECRET_SHAPES: tuple[SecretShape, ...] = (
    # PEM private keys (RSA, EC, OpenSSH, PKCS#8, PGP), also inside a JSON string, and
    # cut-off ones (their base64 lines, not the prose after them).
    SecretShape(
        "private_key",
        ("PRIVATE",),
        re.compile(
            _pem_boundary("BEGIN")
            + r"(?:(?:[^-]|-(?!----))*+"
            + _pem_boundary("END")
            + rf"|(?:{_PEM_GAP}++[A-Za-z0-9+/=]{{16,}}+)*+)"
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
    # Anyone holding the URL can post into the channel: its path is the secret.
    SecretShape(
        "slack_webhook_url",
        ("hooks.slack",),
        re.compile(
            r"hooks\.slack(?:-gov)?\.com/(?:services|workflows|triggers)/"
            r"(?P<value>[A-Za-z0-9_/-]{8,})"
        ),
    ),
    # Anthropic (`sk-ant-…`); OpenAI (`sk-…`, `sk-proj-…`, `sk-svcacct-…`): with a digit,
    # so that a long hyphenated slug is kept.
    SecretShape(
        "api_key", ("sk-",), re.compile(_token("sk-", r"(?=[A-Za-z_-]*[0-9])[A-Za-z0-9_-]{20,}"))
    ),
    # Personal access, OAuth, user-to-server, server-to-server and refresh tokens.
    SecretShape(
        "github_token",
        ("gh",),
        re.compile(_token("gh", r"[pousr]_[A-Za-z0-9]{30,}")),
    ),
    SecretShape(
        "github_fine_grained_token",
        ("github_pat_",),
        re.compile(_token("github_pat_", r"[A-Za-z0-9_]{22,}")),
    ),
    # Personal, deploy, runner, trigger, feed, CI job, incoming-mail, OAuth-secret and
    # agent tokens; newer ones carry `.`-separated routing parts.
    SecretShape(
        "gitlab_token",
        ("gl",),
        re.compile(
            _token("gl", r"(?:pat|dt|rt|ptt|ft|cbt|imt|oas|soat|agent)-")
            + r"[A-Za-z0-9_-]{20,}+(?:\.[A-Za-z0-9_-]++)*+"
        ),
    ),
    # Secret and restricted keys, live and test; webhook signing secrets.
    SecretShape(
        "stripe_key",
        ("k_live_", "k_test_", "whsec_"),
        re.compile(
            "|".join(_token(prefix, "[A-Za-z0-9]{16,}") for prefix in _STRIPE_KEY_PREFIXES)
            + "|"
            + _token("whsec_", "[A-Za-z0-9+/=]{24,}")
        ),
    ),
    SecretShape(
        "aws_access_key_id",
        ("AKIA", "ASIA"),
        re.compile(r"A[KS]IA(?<![A-Za-z0-9_-]A[KS]IA)[A-Z0-9]{16}" + _END),
    ),
    SecretShape("gcp_api_key", ("AIza",), re.compile(_token("AIza", r"[A-Za-z0-9_-]{35}" + _END))),
    # Storage account keys and Service Bus / Event Hubs keys in connection strings
    # (`…;AccountKey=<base64>;…`).
    SecretShape(
        "azure_account_key",
        ("accountkey=", "sharedaccesskey="),
        re.compile(
            f"(?:{_word('accountkey')}|{_word('sharedaccesskey')})="
            r"(?P<value>[A-Za-z0-9+/]{20,}+={0,2}+)"
        ),
        ignore_case=True,
    ),
    # A shared access signature's signature (`?sv=…&sig=<url-encoded base64>`): the rest
    # of the URL says only what it grants, and until when.
    SecretShape(
        "azure_sas_signature",
        ("sig=",),
        re.compile(r"sig=(?<=[?&;]sig=)(?P<value>[A-Za-z0-9%+/=_-]{16,})"),
    ),
    # `scheme://user:password@host`: the password (the user and host are kept). Up to the
    # last `@` before the path, as a password may hold an unescaped `@`.
    SecretShape(
        "url_password",
        ("://",),
        re.compile(r"://(?<=[A-Za-z0-9]://)[^\s/:@\"'<>]*+:(?P<value>[^\s/\"'<>]+)@"),
        confirm=_not_a_placeholder,
    ),
    SecretShape(
        "bearer_token",
        ("bearer",),
        re.compile(_word("bearer") + r"[ \t]++(?P<value>[A-Za-z0-9._~+/-]{12,}+=*+)"),
        ignore_case=True,
        confirm=_looks_random,
    ),
    SecretShape(
        "basic_auth",
        ("basic",),
        re.compile(
            _word("basic") + r"[ \t]++(?P<value>[A-Za-z0-9+/]{6,}+={0,2}+)(?![A-Za-z0-9_-])"
        ),
        ignore_case=True,
        confirm=_is_basic_credentials,
    ),
    _labelled("aws_secret_access_key", ("aws_secret_access_key",), ("aws_secret_access_key",)),
    _labelled("password", ("password", "passwd", "passphrase", "pwd"), ("pass", "pwd")),
    # `secret: …`, `client_secret=…`, `api_key: …`, `X-Api-Key: …`, `access_token=…`.
    _labelled(
        "credential",
        (
            *("secret", "secret_key", "secret-key", "secretkey"),
            *("api_key", "api-key", "apikey"),
            *(f"{kind}{sep}token" for kind in ("access", "auth", "refresh", "api") for sep in "_-"),
        ),
        ("secret", "api", "token"),
    ),
)


def redact_secret_shapes(text: str, replacement: str = SHAPE_REDACTED) -> str:
    """`text` with every secret of a known shape (`SECRET_SHAPES`) replaced.

    Shapes are matched on the text without its invisible characters (a zero-width space
    inside a token hides nothing), and the original characters are replaced. Text without
    secrets comes back unchanged (the same object); scrubbing twice changes nothing more
    than scrubbing once. Cheap when there is nothing to find: a shape's pattern runs only
    when its anchor is in the text.
    """
    visible = VisibleText.of(text)
    lowered = _lower_in_place(visible.text)
    anchors_in_text = frozenset(anchor for anchor in _ANY_ANCHOR if anchor in lowered)
    if not anchors_in_text:
        return text  # most text: one lower-casing and a substring search per anchor
    spans = sorted(
        span
        for shape in SECRET_SHAPES
        if shape.may_occur_in(visible.text, anchors_in_text)
        for span in shape.secret_spans(visible.text, lowered)
    )
    pieces: list[str] = []
    kept_until = 0
    for start, end in _merged(spans):
        start, end = visible.original_span(start, end)
        if text[start:end] == replacement:
            continue  # redacted before
        pieces += (text[kept_until:start], replacement)
        kept_until = end
    if not pieces:
        return text
    pieces.append(text[kept_until:])
    return "".join(pieces)


def redact_everything(value: object) -> object:
    """`value` with Orion's own secrets and every secret of a known shape replaced,
    recursing into lists, tuples and dict values: what is sent to Langfuse."""
    if isinstance(value, str):
        return redact_secret_shapes(cast(str, redact(value)))
    if isinstance(value, dict):
        return {key: redact_everything(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_everything(item) for item in value)
    return value


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _lower_in_place(text: str) -> str:
    """`text` in lower case with every character where it was: `str.lower` unless it
    turned one character into two (`İ`), then the ASCII letters only (slower)."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


def _merged(spans: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Sorted spans, overlapping ones joined (two shapes may find the same secret, or
    one inside another). Adjacent ones stay apart: each was a secret of its own."""
    current: tuple[int, int] | None = None
    for start, end in spans:
        if current is not None and start < current[1]:
            current = (current[0], max(current[1], end))
            continue
        if current is not None:
            yield current
        current = (start, end)
    if current is not None:
        yield current


# Every shape's anchors, in lower case: text holding none of them holds no secret.
_ANY_ANCHOR = tuple(sorted({anchor.lower() for shape in SECRET_SHAPES for anchor in shape.anchors}))
