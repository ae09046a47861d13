"""The kinds of secret Orion recognises by shape, the one list (docs/memory-controls.md), each
pattern linear in its input on any Python 3.11+ (how: docs/benchmarks.md, "Secret redaction")."""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

# Characters a secret may not follow: it would be the end of a longer word.
_NOT_AFTER = "A-Za-z0-9"
# Characters a fixed-length key may not run on into.
_END = r"(?![A-Za-z0-9_-])"


def _token(prefix: str, rest: str) -> str:
    """A secret that starts with the literal `prefix`, not run on from a longer word (`task-…` holds
    no `sk-` key) but possibly glued to one by a separator (`token-xoxb-…`). The check follows the
    prefix, so that the regex engine can look for the prefix quickly."""
    literal = re.escape(prefix)
    return f"{literal}(?<![{_NOT_AFTER}]{literal}){rest}"


def _word(label: str) -> str:
    """`label` (in lower case) as a whole word or the end of a longer name: `bearer`, `DB_PASSWORD`,
    but not `Bearerx` or `mypassword`. As `_token`, checked after the literal is found."""
    literal = re.escape(label)
    return f"{literal}(?<![{_NOT_AFTER}]{literal})"


@dataclass(frozen=True)
class SecretShape:
    """One kind of secret: its pattern and `anchors` (text holding none is not searched);
    `ignore_case`: matched on lowered text; a `value` group is the secret alone, which `confirm` may
    turn down."""

    name: str
    anchors: tuple[str, ...]
    pattern: re.Pattern[str]
    ignore_case: bool = False
    confirm: Callable[[str], bool] | None = None

    @functools.cached_property
    def _lowered_anchors(self) -> frozenset[str]:
        return frozenset(anchor.lower() for anchor in self.anchors)

    def may_occur_in(self, text: str, anchors_in_text: frozenset[str]) -> bool:
        """Whether `text` holds one of this shape's anchors, given the lower-cased
        anchors it holds (each anchor is looked for once, for all shapes)."""
        if anchors_in_text.isdisjoint(self._lowered_anchors):
            return False
        return self.ignore_case or any(anchor in text for anchor in self.anchors)

    def secret_spans(self, text: str, lowered: str) -> Iterator[tuple[int, int]]:
        """Where the secrets of this shape are in `text`: (start, end) of each. `lowered` is
        `text` in lower case, character for character."""
        has_value = "value" in self.pattern.groupindex
        subject = lowered if self.ignore_case else text
        short = len(subject) <= _WINDOW + _REACH
        for match in self.pattern.finditer(subject) if short else self._windowed(subject):
            start, end = match.span("value") if has_value else match.span()
            if end - start >= 2 and text[start] in "\"'" and text[end - 1] == text[start]:
                start, end = start + 1, end - 1  # a quoted value keeps its quotes
            elif text.startswith('\\"', start, end) and text.endswith('\\"', start + 2, end):
                start, end = start + 2, end - 2  # quoted inside a JSON string, as well
            elif has_value:
                while end > start and text[end - 1] in ".!?。！？":
                    end -= 1  # the end of the sentence, not of the value
            if end > start and (self.confirm is None or self.confirm(text[start:end])):
                yield start, end

    def _windowed(self, subject: str) -> Iterator[re.Match[str]]:
        """`finditer`'s matches in a long `subject`, a window at a time so that no search holds
        Python's lock for long; a match starts in its window and is cut `_REACH` past it."""
        resumed = 0
        for window in range(0, len(subject), _WINDOW):
            searched = self.pattern.finditer(
                subject, max(window, resumed), window + _WINDOW + _REACH
            )
            for match in searched:
                if match.start() >= window + _WINDOW:
                    break
                resumed = match.end()
                yield match


# How much of a long text one search reads, and how far past it a secret may run.
_WINDOW, _REACH = 64 * 1024, 16 * 1024


# --- labelled values -------------------------------------------------------------------------

# Blanks around a label's separator: spaces and tabs, and the no-break spaces French puts
# before a colon and the ideographic space of Chinese and Japanese.
_BLANK = "[ \t\u00a0\u202f\u3000]"
# A word value's characters. A `&`, `<` or `>` belongs to the word: a password may hold
# one, and redacting the rest of a query string with it loses nothing that matters. A
# backslash and what it escapes are one character, and an escaped quote ends a word as a
# quote does: in stored JSON, half an escape redacted would break the object.
_WORD = r"(?:[^\s\"',;(){}\[\]\\]|\\[^\s\"'])"
# Any characters but blanks (and quotes), as `_WORD` keeps a JSON string's quotes and
# escapes whole.
_RUN = r"(?:[^\s\"\\]|\\[^\s\"])"
_UNQUOTED = r"(?:[^\s\"'\\]|\\[^\s\"'])"
# A quote that closes a JSON string ("…my password:", "next") opens no value.
_OPENING_QUOTE = r"\"(?![,:}\]])"
# A label, closing quotes (escaped too: JSON in a stored message) or emphasis, then `:`, `=` or
# `:=` (full width too) on its line, then the value: quoted (JSON escapes allowed; at most 1,000
# characters, so an unclosed quote is not searched to the end; no single-quoted value spans a
# `"`) or one word not starting with `*`. A word followed by `(`, `[` or `{` is code, looked
# for within 200 characters so labels glued by `=` ending in `(` are not rescanned from each.
_VALUE = (
    rf"(?P<value>{_OPENING_QUOTE}(?:[^\"\\\n]|\\.){{1,1000}}\"|'(?:[^'\"\\\n]|\\.){{1,1000}}'"
    r"|\\\"(?:[^\"\\\n]|\\[^\"\n]){1,1000}\\\""
    rf"|(?!\*)(?!{_WORD}{{0,200}}[(\[{{]){_WORD}+)"
)
_LABEL_THEN_VALUE = rf"(?:[\"'*]|\\\")*{_BLANK}*(?::=|[:=：＝]){_BLANK}*(?:\*+{_BLANK}*)?{_VALUE}"
# Labelled values that are no secret: placeholders (`$DB_PASSWORD`, `%s`, `${…}`), a literal,
# type or keyword (`if not password:`), the secret named (`api_key = settings.api_key`).
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
_IDENTIFIER_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _not_a_placeholder(value: str) -> bool:
    """Not a template or a shell variable standing for the secret (`%s`, `{password}`,
    `${…}`, `$(…)`, `$DB_PASSWORD`, `$dbPassword`): `$3cr3t!`, `$ecretP4ss` and `$hunter2`
    are passwords that start with `$`."""
    if value[:1] in ("%", "{") or value[:2] in ("${", "$("):
        return False
    name = value[1:]
    if value[:1] == "$" and _IDENTIFIER.fullmatch(name):
        named = any(word in name.lower() for word in (*_CREDENTIAL_WORDS, "pw", "auth"))
        return not (name.isupper() or (named and not any(c.isdigit() for c in name)))
    return True


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


def _looks_random(value: str) -> bool:
    """A token, not a word ("Bearer responsibilities", "token: expired"): letters and digits."""
    return any(char.isdigit() for char in value) and any(char.isalpha() for char in value)


def _is_a_token(value: str) -> bool:
    """After the bare label `token`: a value that looks like one (`token: 9f86d0…`)."""
    return _is_a_value(value) and _looks_random(value)


def _labelled(
    name: str,
    labels: tuple[str, ...],
    anchors: tuple[str, ...],
    confirm: Callable[[str], bool] = _is_a_value,
) -> SecretShape:
    """A value after one of `labels` (whole words, lower case, matched in any case;
    `DB_PASSWORD=` counts), each holding one of `anchors`: only an explicit `label: value` or
    `label=value` ("the password policy: 12 characters" is kept). Longest label first."""
    words = "|".join(_word(label) for label in sorted(labels, key=len, reverse=True))
    pattern = re.compile(f"(?:{words}){_LABEL_THEN_VALUE}")
    return SecretShape(name, anchors, pattern, ignore_case=True, confirm=confirm)


# "Password" in Japanese, Chinese and Korean, labelled or said, and the anchors they hold.
_PASSWORD_CJK = ("パスワード", "暗証番号", "密码", "密碼", "口令", "비밀번호", "패스워드", "암호")
_PASSWORD_CJK_ANCHORS = tuple(label.removesuffix("番号") for label in _PASSWORD_CJK)
# Labels in English and Orion's other languages (app/learning/language_names.py), lower case,
# accents as written and folded, grouped so each group's pattern runs only on text holding one
# of its anchors (a pattern of many labels tries every position that could start one).
_LABELS: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "password",
        (
            *("password", "passwd", "passphrase", "passwort", "mot de passe", "mot-de-passe"),
            *("palavra-passe", "palavra passe", "passcode", "pgpassword"),
        ),
        ("pass",),
    ),
    ("password_abbreviated", ("pwd", "mdp", "pw"), ("pwd", "mdp", "pw")),
    (
        "password_in_other_words",
        (
            *("contraseña", "contrasena", "clave de acceso", "kennwort", "senha", "wachtwoord"),
            "parola d'ordine",
        ),
        ("contrase", "clave", "kennwort", "senha", "wachtwoord", "parola"),
    ),
    ("password_in_cjk", _PASSWORD_CJK, _PASSWORD_CJK_ANCHORS),
    # Secrets and keys by name: `client_secret=…`, `api_key: …`, `X-Api-Key: …`,
    # `access_token=…`, "API key: …", "clé API : …".
    ("credential", ("secret", "secret_key", "secret-key", "secretkey"), ("secret",)),
    (
        "api_key_by_name",
        (
            *("api_key", "api-key", "apikey", "api key", "clé api", "clé d'api", "clave api"),
            *("clave de api", "api-schlüssel", "chave api", "chave de api", "chiave api"),
            "api-sleutel",
        ),
        ("api",),
    ),
    (
        "token_by_name",
        tuple(f"{kind}{sep}token" for kind in ("access", "auth", "refresh", "api") for sep in "_-"),
        ("_token", "-token"),
    ),
    (
        "credential_in_cjk",
        ("apiキー", "シークレット", "api密钥", "密钥", "api 키", "비밀 키"),
        ("キー", "シークレット", "密钥", "키"),
    ),
)
# The bare word "token" (`GITHUB_TOKEN=…`, `"token": "…"`, `token: <hex>`): only a value
# that looks like one ("token: expired" is kept).
_TOKEN_LABELS = ("token", "トークン", "令牌", "토큰")


# --- secrets said in a sentence, PINs and card numbers ------------------------------------------

# "the password for the office wifi is …": a label, perhaps what it opens (a preposition and at
# most three words), then "is" in one of Orion's languages (or a colon after what it opens), then
# the value; "the password length is 12" is kept. Words of at most 24 characters, fewest first:
# a bounded number of steps per label.
_FOR = r"(?:for|to|of|on|at|du|de|des|pour|für|zum|zur|van|voor|do|da|para|per|del|di)"
_WHAT_IT_OPENS = rf"[ \t]+{_FOR}(?:[ \t]+[^\s]{{1,24}}){{1,3}}?"
_IS = r"(?:is|was|est|était|es|era|ist|lautet|war|é|è|fue|foi)"
_SAID = (
    rf"(?:{_WHAT_IT_OPENS})?[ \t]+{_IS}(?:{_BLANK}*[:：])?{_BLANK}+"
    rf"|{_WHAT_IT_OPENS}{_BLANK}*[:：](?!=){_BLANK}*"
)
# In Japanese, Chinese and Korean a particle or copula follows the label without a space
# (パスワードは, 密码是, 비밀번호는), and the value runs into the next word (…です,
# …입니다): there, the value is its printable ASCII characters (or a 「quoted」 one).
_CJK_IS = "(?:は|が|是|为|為|는|은|가|이)"
_ASCII_WORD = r"(?:[A-Za-z0-9!#$%&*+\-./:<=>?@^_|~]|\\[^\s\"'])"
_CJK_VALUE = (
    rf"(?P<value>「[^」\n]{{1,100}}」|{_OPENING_QUOTE}[^\"\n]{{1,100}}\"|{_ASCII_WORD}{{4,}})"
)


# A digit, a symbol, or a capital letter after the first.
_CHOSEN = re.compile(r"[^\w'-]|[\d_]|.[A-Z]")


def _said_like_a_password(value: str) -> bool:
    """After "my password is": a value someone chose ("hunter2", "Tr0ub4dor&3",
    "OpenSesame"), not the rest of a sentence about one ("is expired", "is too short")."""
    if value[:1] == "「":
        return True
    return _CHOSEN.search(value) is not None and _is_a_value(value)


def _said(name: str, labels: tuple[str, ...], anchors: tuple[str, ...]) -> SecretShape:
    """A password said in a sentence after one of `labels` (in lower case; each holds one
    of `anchors`). Its value has at least four characters: fewer would be no password, and
    a text of labels each followed by one character would be a match every few."""
    words = "|".join(_word(label) for label in sorted(labels, key=len, reverse=True))
    if labels[0].isascii():
        said = rf"(?:{_SAID})(?=\S{{4}}){_VALUE}"
    else:
        said = f"(?:{_CJK_IS}{_BLANK}*|{_BLANK}+){_CJK_VALUE}"
    pattern = re.compile(f"(?:{words}){said}")
    return SecretShape(name, anchors, pattern, ignore_case=True, confirm=_said_like_a_password)


# The labels a password is said after: not `pwd` ("the output of pwd is /home/sam").
_SAID_LABELS = (
    *("password", "passwd", "passphrase", "passcode", "pw", "passwort", "kennwort"),
    *("mot de passe", "mdp", "contraseña", "contrasena", "clave", "senha", "wachtwoord"),
    *("palavra-passe", "palavra passe", "parola d'ordine"),
)
_SAID_ANCHORS = (
    *("pass", "pw", "kennwort", "mdp", "contrase", "clave", "senha", "wachtwoord", "parola"),
)


# A PIN or a card's security code: digits after the label, labelled ("PIN: 4821"), said ("my
# PIN is 4821", "mon code PIN est 4821"), or right after it ("PIN 4821").
_PIN_LABELS = (
    *("pin", "pin code", "pin-code", "pincode", "code pin", "pin number", "pin-nummer"),
    *("geheimzahl", "pin码", "핀번호", "핀 번호", "cvv", "cvv2", "cvc", "cvc2"),
)
_PIN = (
    "(?:" + "|".join(_word(label) for label in sorted(_PIN_LABELS, key=len, reverse=True)) + ")"
    rf"(?:{_SAID}|{_BLANK}*[:=：＝]{_BLANK}*|{_CJK_IS}{_BLANK}*|{_BLANK}+)"
    r"(?P<value>[0-9]{3,8})(?![0-9])"
)


def _passes_luhn(value: str) -> bool:
    """A payment card's number: 13 to 19 digits whose check digit is right (the Luhn
    check), which one run of digits in ten passes by chance."""
    digits = [int(char) for char in value if char.isdigit()]
    if not 13 <= len(digits) <= 19:
        return False
    total = 0
    for position, digit in enumerate(reversed(digits)):
        if position % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


# A card number as written: run together, in fours, or as Amex and Diners group them. It starts
# with 2 to 6 (Slack's timestamps and epoch milliseconds start with 1 for years to come). Never
# next to a letter or `_`, and run together never right after a quote: hexadecimal in an undo
# record (app/learning/undo.py) is bounded so; a number ending a stored JSON string counts.
_CARD_NUMBER = (
    r"[2-6](?<![0-9A-Za-z_][2-6])(?:(?<!\"[2-6])[0-9]{12,18}"
    r"|[0-9]{3}(?P<sep>[ -])[0-9]{4}(?P=sep)[0-9]{4}(?P=sep)[0-9]{1,4}(?:(?P=sep)[0-9]{1,3})?"
    r"|(?<=3)[0-9]{3}(?P<amex>[ -])[0-9]{6}(?P=amex)[0-9]{4,5})(?![0-9A-Za-z_])"
)


# --- keys and tokens with a prefix of their own -----------------------------------------------


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
    """`-----BEGIN RSA PRIVATE KEY-----` (`word` is BEGIN or END), also with its words on several
    lines or with extra spaces. At most five dashes either side, so that a run of dashes is not
    scanned again from each of its dashes, and a header does not run on into the next one."""
    boundary = r"-{3,5}[ \t]*WORD(?:GAP+[A-Z0-9]+){0,3}GAP+PRIVATEGAP+KEY"
    return boundary.replace("GAP", _PEM_GAP).replace("WORD", word) + (
        r"(?:" + _PEM_GAP + r"+BLOCK)?[ \t]*-{3,5}"
    )


_STRIPE_KEY_PREFIXES = ("sk_live_", "rk_live_", "sk_test_", "rk_test_")
# A JWT's header and payload: base64url, stopping before a glued `eyJ` (`-eyJ`, `_eyJ`).
_JWT_PART = r"(?:[A-Za-z0-9]|[_-](?!eyJ)){8,}"


# Keys of other services a person may paste into a conversation: (name, prefix, the rest).
_VENDOR_TOKENS = (
    ("twilio_api_key", "SK", "[0-9a-f]{32}" + _END),
    ("digitalocean_token", "dop_v1_", "[a-f0-9]{64}"),
    ("postman_key", "PMAK-", "[A-Za-z0-9-]{40,}"),
    ("notion_token", "ntn_", "[A-Za-z0-9]{40,}"),
    ("sentry_token", "sntry", "[su]_[A-Za-z0-9+/=_-]{40,}"),
    ("groq_key", "gsk_", "[A-Za-z0-9]{40,}"),
    ("linear_key", "lin_", "(?:api|oauth)_[A-Za-z0-9]{32,}"),
    ("grafana_service_account_token", "glsa_", "[A-Za-z0-9_]{32,}"),
    ("grafana_cloud_token", "glc_", "[A-Za-z0-9_+/=]{32,}"),
    ("databricks_token", "dapi", "[a-f0-9]{32}" + _END),
    ("square_token", "sq0", "(?:atp|csp)-[A-Za-z0-9_-]{22,}"),
    ("age_secret_key", "AGE-SECRET-KEY-1", "[0-9A-Z]{58}"),
    ("tailscale_key", "tskey-", "[A-Za-z0-9-]{20,}"),
    ("doppler_token", "dp.", r"(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}"),
    ("supabase_token", "sbp_", "[a-f0-9]{40}" + _END),
)


def _prefixed(name: str, prefix: str, rest: str) -> SecretShape:
    """A key that starts with `prefix` (its anchor), followed by `rest`."""
    return SecretShape(name, (prefix,), re.compile(_token(prefix, rest)))


# Specific on purpose: a prefix plus a run too long to be a word (`xoxb-` alone is kept), a
# labelled value only after an explicit label; each shape has a test that it is found and one
# that ordinary text is not (tests/observability/test_secret_shapes.py).
SECRET_SHAPES: tuple[SecretShape, ...] = (
    # PEM private keys (RSA, EC, OpenSSH, PKCS#8, PGP), also inside a JSON string, and
    # cut-off ones (their base64 lines, not the prose after them). The body stops at the
    # first `-----`: a header is matched with its own END or alone, never past the next.
    SecretShape(
        "private_key",
        ("PRIVATE",),
        re.compile(
            _pem_boundary("BEGIN")
            + r"(?:(?:[^-]|-(?!----))*"
            + _pem_boundary("END")
            + rf"|(?:{_PEM_GAP}+[A-Za-z0-9+/=]{{16,}})*)"
        ),
    ),
    # Header and payload are base64url JSON (`eyJ` is `{"`); the signature may be empty.
    _prefixed("jwt", "eyJ", rf"{_JWT_PART}\.eyJ{_JWT_PART}\.[A-Za-z0-9_-]*"),
    # Bot, user, app-configuration, refresh... tokens (`xoxe.xoxp-…` when rotated); a
    # browser session's client token (`xoxc-`) and its `d` cookie (`xoxd-`, URL-encoded
    # base64); legacy workspace and user tokens (`xoxa-2-…`, `xoxo-<digits>-…`: not "xoxo").
    _prefixed(
        "slack_token",
        "xox",
        r"(?:e\.xox)?(?:d-[A-Za-z0-9%/+=-]{8,}|[abceprs]-[A-Za-z0-9-]{8,}"
        r"|o-[0-9]+-[A-Za-z0-9-]{8,})",
    ),
    _prefixed("slack_app_token", "xapp-", r"[A-Za-z0-9-]{8,}"),
    # Anyone holding the URL can post into the channel: its path is the secret. Host names
    # are matched in any case, and the URL also inside another's query (`%2F` for `/`).
    SecretShape(
        "slack_webhook_url",
        ("hooks.slack",),
        re.compile(
            r"hooks\.slack(?:-gov)?\.com(?:/|%2f)(?:services|workflows|triggers)(?:/|%2f)"
            r"(?P<value>[a-z0-9_/%-]{8,})"
        ),
        ignore_case=True,
    ),
    # A file's public link: its last part is the file's secret (`pub_secret`).
    SecretShape(
        "slack_public_file_link",
        ("slack-files.com/", "files-pub/", "pub_secret="),
        re.compile(
            r"(?:(?:slack-files\.com/|files-pub/)t[a-z0-9]+-f[a-z0-9]+-|pub_secret=)"
            r"(?P<value>[a-f0-9]{8,})"
        ),
        ignore_case=True,
    ),
    # Discord's and Microsoft Teams' incoming webhooks, as Slack's.
    SecretShape(
        "chat_webhook_url",
        ("/api/webhooks/", "webhook.office.com/"),
        re.compile(
            r"(?:/api/webhooks/[0-9]{17,20}/|webhook\.office\.com/webhookb2/)"
            r"(?P<value>[a-z0-9@/._-]{30,})"
        ),
        ignore_case=True,
    ),
    # Anthropic (`sk-ant-…`); OpenAI (`sk-…`, `sk-proj-…`, `sk-svcacct-…`): with a digit
    # (its `sk-` holds letters), so that a long hyphenated slug (`sk-learn-style-…`) is kept.
    SecretShape(
        "api_key", ("sk-",), re.compile(_token("sk-", r"[A-Za-z0-9_-]{20,}")), confirm=_looks_random
    ),
    # Personal access, OAuth, user-to-server, server-to-server and refresh tokens.
    _prefixed("github_token", "gh", r"[pousr]_[A-Za-z0-9]{30,}"),
    _prefixed("github_fine_grained_token", "github_pat_", r"[A-Za-z0-9_]{22,}"),
    # Personal, deploy, runner, trigger, feed, CI job, incoming-mail, OAuth-secret and
    # agent tokens; newer ones carry `.`-separated routing parts.
    _prefixed(
        "gitlab_token",
        "gl",
        r"(?:pat|dt|rt|ptt|ft|cbt|imt|oas|soat|agent)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*",
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
        re.compile(rf"A[KS]IA(?<![{_NOT_AFTER}]A[KS]IA)[A-Z0-9]{{16}}" + _END),
    ),
    _prefixed("gcp_api_key", "AIza", r"[A-Za-z0-9_-]{35}" + _END),
    # Google OAuth client secrets.
    _prefixed("google_oauth_client_secret", "GOCSPX-", r"[A-Za-z0-9_-]{24,}"),
    # Google OAuth access tokens (`ya29.…`), refresh tokens (`1//0…`) and authorization
    # codes (`4/0A…`), bare as well as after `Bearer` or `access_token=`.
    SecretShape(
        "google_oauth_token",
        ("ya29.", "1//0", "4/0A"),
        re.compile(
            "|".join(
                _token(prefix, r"[A-Za-z0-9_-]{" + length + ",}")
                for prefix, length in (("ya29.", "20"), ("1//0", "30"), ("4/0A", "30"))
            )
        ),
    ),
    # Mailgun's private API keys.
    _prefixed("mailgun_key", "key-", r"[0-9a-z]{32}" + _END),
    *(_prefixed(name, prefix, rest) for name, prefix, rest in _VENDOR_TOKENS),
    # Telegram bot tokens: the bot's number, `:AA`, 33 characters.
    SecretShape(
        "telegram_bot_token",
        (":AA",),
        re.compile(r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}" + _END),
    ),
    # Microsoft Entra (Azure AD) client secrets: three characters, a digit, `Q~`, the rest.
    SecretShape(
        "azure_client_secret",
        ("Q~",),
        re.compile(r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}" + _END),
    ),
    # npm access tokens; PyPI API tokens (a macaroon naming pypi.org).
    _prefixed("npm_token", "npm_", r"[A-Za-z0-9]{36}" + _END),
    _prefixed("pypi_token", "pypi-", r"AgEIcHlwaS5vcmc[A-Za-z0-9_-]{40,}"),
    # SendGrid: `SG.<22>.<43>`.
    _prefixed("sendgrid_key", "SG.", r"[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _END),
    # Hugging Face user and organisation tokens.
    _prefixed("hugging_face_token", "hf_", r"[A-Za-z0-9]{30,}"),
    # Docker Hub personal access tokens.
    _prefixed("docker_token", "dckr_pat_", r"[A-Za-z0-9_-]{20,}"),
    # HashiCorp Vault service, batch and recovery tokens.
    _prefixed("vault_token", "hv", r"[sbr]\.[A-Za-z0-9_-]{24,}"),
    # Shopify access tokens, custom-app, private-app and shared secrets.
    _prefixed("shopify_token", "shp", r"(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _END),
    # Atlassian (Jira, Confluence) API tokens.
    _prefixed("atlassian_token", "ATATT", r"[A-Za-z0-9_=-]{40,}"),
    # Storage account keys and Service Bus / Event Hubs keys in connection strings
    # (`…;AccountKey=<base64>;…`).
    SecretShape(
        "azure_account_key",
        ("accountkey=", "sharedaccesskey="),
        re.compile(
            f"(?:{_word('accountkey')}|{_word('sharedaccesskey')})="
            r"(?P<value>[A-Za-z0-9+/]{20,}={0,2})"
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
        re.compile(r"://(?<=[A-Za-z0-9]://)[^\s/:@\"'<>]*:(?P<value>[^\s/\"'<>]+)@"),
        confirm=_not_a_placeholder,
    ),
    SecretShape(
        "bearer_token",
        ("bearer",),
        re.compile(_word("bearer") + r"[ \t]+(?P<value>[A-Za-z0-9._~+/-]{12,}=*)"),
        ignore_case=True,
        confirm=_looks_random,
    ),
    SecretShape(
        "basic_auth",
        ("basic",),
        re.compile(_word("basic") + r"[ \t]+(?P<value>[A-Za-z0-9+/]{6,}={0,2})(?![\w+/=-])"),
        ignore_case=True,
        confirm=_is_basic_credentials,
    ),
    _labelled("aws_secret_access_key", ("aws_secret_access_key",), ("secret",)),
    *(_labelled(name, labels, anchors) for name, labels, anchors in _LABELS),
    _labelled("token", _TOKEN_LABELS, _TOKEN_LABELS, confirm=_is_a_token),
    # A web session's cookie: whoever holds it is logged in.
    _labelled(
        "session_cookie",
        (*("sessionid", "session_id", "session-id", "jsessionid", "phpsessid", "connect.sid"),),
        ("sessionid", "session_id", "session-id", "sessid", "connect.sid"),
        confirm=_is_a_token,
    ),
    # `docker login --password hunter2`, `sshpass -p hunter2 ssh …`, `curl -u bob:hunter2`.
    SecretShape(
        "password_on_a_command_line",
        ("--pass", "--token", "--secret", "--api-key", "--client-secret", "sshpass"),
        re.compile(
            r"(?:--(?:password|passwd|pass|token|secret|api-key|apikey|client-secret)"
            rf"|sshpass[ \t]+-p)[ \t]+(?![-:=]){_VALUE}"
        ),
        ignore_case=True,
        confirm=_is_a_value,
    ),
    SecretShape(
        "user_and_password_on_a_command_line",
        ("-u", "--user"),
        re.compile(rf"(?<![^\s])(?:-u|--user)[ \t]+[\"']?[^\s:\"']+:(?P<value>{_UNQUOTED}+)"),
        confirm=_not_a_placeholder,
    ),
    # A `.netrc` entry (`machine … login bob password hunter2`).
    SecretShape(
        "netrc_password",
        ("login",),
        re.compile(rf"(?<![a-z0-9])login\s+[^\s]+\s+password\s+(?P<value>{_RUN}+)"),
        ignore_case=True,
        confirm=_is_a_value,
    ),
    # A Wi-Fi network as a QR code writes it (`WIFI:T:WPA;S:Office;P:hunter2;;`).
    SecretShape(
        "wifi_password",
        ("wifi:",),
        re.compile(r"wifi:(?:[^;\n]{0,100};){0,6}?p:(?P<value>(?:\\.|[^;\\\n]){1,100})"),
        ignore_case=True,
    ),
    # A wallet's recovery phrase: 12 to 24 words of 3 to 8 letters after its label.
    SecretShape(
        "recovery_phrase",
        ("phrase", "mnemonic"),
        re.compile(
            "(?:"
            + "|".join(
                _word(label)
                for label in (
                    *("secret recovery phrase", "recovery phrase", "seed phrase"),
                    *("mnemonic phrase", "backup phrase", "mnemonic"),
                )
            )
            + rf")(?:{_SAID}|{_BLANK}*[:=：＝]{_BLANK}*)"
            r"(?P<value>[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23})"
        ),
        ignore_case=True,
    ),
    _said("password_in_a_sentence", _SAID_LABELS, _SAID_ANCHORS),
    _said("password_in_a_sentence_cjk", _PASSWORD_CJK, _PASSWORD_CJK_ANCHORS),
    SecretShape(
        "pin", ("pin", "geheimzahl", "핀", "cvv", "cvc"), re.compile(_PIN), ignore_case=True
    ),
    SecretShape("card_number", tuple("23456"), re.compile(_CARD_NUMBER), confirm=_passes_luhn),
)
