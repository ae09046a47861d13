"""Secrets that escaped redaction: one row per shape, each kept nowhere.

Every row is a secret as a person pastes it (or Claude names a memory file after it) that
the shapes of app/observability/secret_shapes.py once let through: tokens glued to a word
by `-` or `_`, keys of vendors no shape knew, `token` and `API key` labels, JSON `"token"`
fields, and password labels in the nine other languages Orion understands; then the forms
the attacker of issue 44 found stored as written: Slack's own session tokens, cookies and
webhook URLs, Google's OAuth tokens, a password said in a sentence in each of Orion's ten
languages or starting with `$`, a password with `&`, `<` or `>` as Slack sends it, Mailgun
keys, PINs and card numbers (with a valid check digit), credentials on a command line, and
keys of other services. Each row is checked on every way out: the text as stored (the
secret-free store every memory write passes through), a memory file named after it, a log
line quoting it, and what Langfuse is sent.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.memory.secret_free_store import SecretFreeStore
from app.memory.tool.access import check_name_holds_no_secret
from app.memory.tool.errors import MemoryToolError
from app.observability.logging import configure_logging, get_logger
from app.observability.redaction import redact_everything, redact_secret_shapes
from app.storage.local_directory import LocalDirectoryStore

SLACK_BOT = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
SLACK_USER = "xoxp-1111111111-2222222222-333333333333-abcdef0123456789"
GITHUB_PAT = "ghp_" + "A1b2C3d4" * 4 + "E5f6"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0"
RANDOM = "Zq8xW2vB7nM4kL1pR6tY9sD3"
HEX = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
KEY64 = "Qm9yaW5nS2V5MDEyMzQ1Njc4OWFiY2RlZkdISUpLTE1OT1BRUlNUVVZXWFlaMDEy"
XOXC = "xoxc-1234567890123-1234567890123-1234567890123-" + HEX
XOXD = "xoxd-Ab1Cd2Ef3Gh4%2FIj5Kl6Mn7%2BOp8Qr9St0Uv1Wx2Yz3%3D%3D"
WEBHOOK = "https://hooks.slack.com/services/T0001ABCD/B0002EFGH/XyZ123abcDEF456ghiJKL789"
ENCODED_WEBHOOK = (
    "https%3A%2F%2Fhooks.slack.com%2Fservices%2FT0001ABCD%2FB0002EFGH%2FXyZ123abcDEF456"
)
YA29 = "ya29.a0AfB_byC1dE2fG3hI4jK5lM6nO7pQ8rS9tU0vW1xY2zA3bC4dE5fG6hI7jK8lM9nO0"
GOOGLE_REFRESH = "1//0gLz5kK2vQxYZCgYIARAAGBASNwF-L9Ir8mC7dT1xWq3nE5sB6uV4yZ0aF2hJ9kP"
GOOGLE_CODE = "4/0AeaYSHBk7wqR2pL9xM3nV5tY8uI1oP6aS4dF7gH0jK2lZ"
SEED_PHRASE = "abandon ability able about above absent absorb abstract absurd abuse access accident"

# (row id, the text, the secret in it)
ROWS: list[tuple[str, str, str]] = [
    # glued to a word
    ("slack token after 'token-'", f"use token-{SLACK_BOT} for staging", SLACK_BOT),
    ("slack token after 'slack_'", f"SLACK_USER=slack_{SLACK_USER}", SLACK_USER),
    ("github token after '_'", f"ci_{GITHUB_PAT} expires soon", GITHUB_PAT),
    ("jwt after '-'", f"session-{JWT}", JWT),
    ("token in a file name", f"/memories/users/U1/tokens/token-{SLACK_BOT}.md", SLACK_BOT),
    # labels
    ("json token field", json.dumps({"name": "ci", "token": RANDOM}), RANDOM),
    ("token: hex", f"token: {HEX}", HEX),
    ("GITHUB_TOKEN=", f"export GITHUB_TOKEN={RANDOM}", RANDOM),
    ("API key with a space", f"The API key: {RANDOM}", RANDOM),
    # vendors
    (
        "npm",
        "//registry.npmjs.org/:_authToken=npm_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3gH5",
        "npm_",
    ),
    ("google oauth client secret", "client 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", "GOCSPX-Ab1"),
    (
        "sendgrid",
        "SENDGRID=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",
        "SG.aB1",
    ),
    ("hugging face", "HF hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh ok", "hf_AbCd"),
    (
        "pypi",
        "twine upload -p pypi-AgEIcHlwaS5vcmcCJDk2ZjZkNDYtNWJhYi00NjQ2LTk3YjYtMzZmZGE3ZTc2OTEz",
        "pypi-AgEI",
    ),
    ("docker", "docker login -p dckr_pat_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9", "dckr_pat_"),
    ("vault", "VAULT hvs.CAESIJaB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2yZ3", "hvs.CAES"),
    ("shopify", "shop shpat_0123456789abcdef0123456789abcdef", "shpat_0123"),
    (
        "atlassian",
        "jira ATATT3xFfGF0aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2yZ3aB1cD2eF3gH4=0123ABCD",
        "ATATT3xFf",
    ),
    # password labels in Orion's other languages
    ("french", f"mot de passe\u00a0: {RANDOM}", RANDOM),
    ("spanish", f"contraseña: {RANDOM}", RANDOM),
    ("german", f"Kennwort: {RANDOM}", RANDOM),
    ("portuguese", f"a senha: {RANDOM}", RANDOM),
    ("italian", f"la parola d'ordine: {RANDOM}", RANDOM),
    ("dutch", f"Wachtwoord: {RANDOM}", RANDOM),
    ("japanese", f"パスワード：{RANDOM}", RANDOM),
    ("chinese", f"我的密码：{RANDOM}", RANDOM),
    ("korean", f"비밀번호: {RANDOM}", RANDOM),
    # --- issue 44: forms that were stored as written ---------------------------------------
    # Slack's own
    ("slack session token (xoxc)", f"the web client sends {XOXC} on each call", XOXC),
    ("slack cookie (xoxd)", f"Cookie: d={XOXD}; d-s=1712345678", XOXD),
    ("slack cookie, unencoded", "d=xoxd-Ab1Cd2Ef3/Gh4+Ij5Kl6Mn7==", "Gh4+Ij5Kl6Mn7"),
    ("slack legacy workspace token", "xoxa-2-1234567890-9876543210-AbCdEf0123456789", "AbCdEf0123"),
    ("slack legacy user token", "legacy xoxo-1234567890-9876543210-abcdef0123456789", "abcdef0123"),
    ("webhook in Slack's link markup", f"alerts go to <{WEBHOOK}|the hook>", "XyZ123abcDEF456"),
    ("webhook, host in capitals", WEBHOOK.replace("hooks.slack.com", "HOOKS.SLACK.COM"), "XyZ123"),
    ("webhook, URL-encoded in a query", f"?target={ENCODED_WEBHOOK}&x=1", "XyZ123abcDEF456"),
    (
        "slack public file link",
        "https://slack-files.com/T0123ABCD-F0456EFGH-a1b2c3d4e5f6",
        "a1b2c3d4e5f6",
    ),
    # Google
    ("google access token (ya29)", f"curl -H 'x-goog: {YA29}'", YA29),
    ("google refresh token", f"refresh with {GOOGLE_REFRESH}", GOOGLE_REFRESH),
    ("google authorization code", f"code={GOOGLE_CODE}&scope=email", GOOGLE_CODE),
    # Said in a sentence, in each of Orion's ten languages
    ("english sentence", "my password is Hunter2! don't tell", "Hunter2"),
    ("english, what it opens", "the password for the office wifi is Tr0ub4dor&3", "Tr0ub4dor"),
    ("french sentence", "mon mot de passe est soleil2024", "soleil2024"),
    ("spanish sentence", "mi contraseña es gato_negro7", "gato_negro7"),
    ("german sentence", "Das Passwort lautet Sommer2024!", "Sommer2024"),
    ("portuguese sentence", "a minha senha é Lisboa#99", "Lisboa#99"),
    ("italian sentence", "la mia password è Roma2024", "Roma2024"),
    ("dutch sentence", "mijn wachtwoord is Fiets123", "Fiets123"),
    ("japanese sentence", "パスワードはsakura2024です", "sakura2024"),
    ("chinese sentence", "我的密码是abc12345", "abc12345"),
    ("korean sentence", "제 비밀번호는 hunter2입니다", "hunter2"),
    ("pw: shorthand", "pw: Winter2024", "Winter2024"),
    ("PGPASSWORD", "PGPASSWORD=s3cr3t psql -h db", "s3cr3t"),
    # Passwords that start with `$`
    ("$-leading password", "password: $ecretP4ss", "$ecretP4ss"),
    ("$-leading in an env line", "DB_PASSWORD=$3cr3t!x", "$3cr3t"),
    ("$-leading in a URL", "postgres://app:$hunter2@db/app", "$hunter2"),
    # Slack's entities: a password holding `&`, `<` or `>` as Slack sends it
    ("entities, as Slack sends them", "password: p&amp;ss&lt;w0rd&gt;9 ok", "w0rd"),
    ("entities, decoded", "password: p&ss<w0rd>9 ok", "w0rd"),
    # Mailgun
    ("mailgun key", "MAILGUN=key-3ax6xnjp29jd6fds4gc373sgvjxteol0", "3ax6xnjp29jd6fds"),
    # PINs and card numbers
    ("PIN labelled", "PIN: 4821", "4821"),
    ("PIN in a sentence", "my PIN is 4821, don't share it", "4821"),
    ("PIN in french", "mon code PIN est 4821", "4821"),
    ("PIN in german", "Geheimzahl: 4821", "4821"),
    ("card security code", "CVV 737", "737"),
    ("card number, in fours", "card 4111 1111 1111 1111 exp 12/29", "1111 1111 1111"),
    ("card number, dashed", "5500-0000-0000-0004", "0000-0000-0004"),
    ("card number, amex", "amex 3782 822463 10005", "822463 10005"),
    ("card number, run together", "6011000990139424 on file", "6011000990139424"),
    # On a command line, in files people paste
    ("--password", "docker login -u sam --password Hunter2x", "Hunter2x"),
    ("curl -u", "curl -u sam:hunter2 https://api.example.com", "hunter2"),
    ("sshpass -p", "sshpass -p 'hunter2' ssh sam@host", "hunter2"),
    (".netrc", "machine api.example.com login sam password hunter2", "hunter2"),
    ("wifi QR code", "WIFI:T:WPA;S:Office;P:hunter2;;", "hunter2"),
    ("session cookie", "Cookie: sessionid=8f3a2b1c9d7e6f5a4b3c; theme=dark", "8f3a2b1c9d7e"),
    ("recovery phrase", f"my seed phrase is {SEED_PHRASE}", "abandon ability able"),
    # Other services
    ("discord webhook", f"https://discord.com/api/webhooks/123456789012345678/{KEY64}", KEY64),
    (
        "teams webhook",
        f"https://acme.webhook.office.com/webhookb2/{KEY64}@x/IncomingWebhook/y",
        KEY64,
    ),
    ("telegram bot token", f"bot 123456789:AA{KEY64[:33]} ok", KEY64[:33]),
    ("twilio api key", "SK0123456789abcdef0123456789abcdef", "0123456789abcdef0123"),
    ("entra client secret", "secret xY.8Q~aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3g", "aB3dE5gH7jK9"),
    ("digitalocean", f"dop_v1_{HEX}", HEX),
    ("postman", "PMAK-0123456789abcdef01234567-0123456789abcdef0123456789abcdef01", "PMAK-0123"),
    ("notion", f"ntn_{KEY64[:46]}", KEY64[:46]),
    ("sentry", f"sntrys_eyJ{KEY64}", KEY64),
    ("groq", f"gsk_{KEY64[:52]}", KEY64[:52]),
    ("linear", f"lin_api_{KEY64[:40]}", KEY64[:40]),
    ("grafana", f"glsa_{KEY64[:32]}_0123abcd", KEY64[:32]),
    ("databricks", "dapi0123456789abcdef0123456789abcdef", "0123456789abcdef0123"),
    ("square", f"sq0atp-{KEY64[:22]}", KEY64[:22]),
    ("age key", "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2, "QPZRY9X8GF2TVDW0"),
    ("tailscale", f"tskey-auth-{KEY64[:30]}", KEY64[:30]),
    ("doppler", f"dp.pt.{KEY64[:43]}", KEY64[:43]),
    ("supabase", f"sbp_{HEX[:40]}", HEX[:40]),
]
IDS = [row[0] for row in ROWS]


@pytest.mark.parametrize(("text", "secret"), [row[1:] for row in ROWS], ids=IDS)
async def test_the_secret_is_kept_nowhere(text: str, secret: str, tmp_path: Path) -> None:
    # Stored: every memory write passes through the secret-free store.
    store = SecretFreeStore(LocalDirectoryStore(tmp_path))
    await store.write("users/U1/notes.md", text)
    stored = (tmp_path / "users/U1/notes.md").read_text()
    assert secret not in stored
    assert "[redacted]" in stored

    # A memory file named after it is refused, and the refusal does not quote it.
    with pytest.raises(MemoryToolError) as refused:
        check_name_holds_no_secret(f"/memories/users/U1/{text}.md")
    assert secret not in str(refused.value)

    # Logged: a line quoting it (as a library's error message would).
    stream = io.StringIO()
    configure_logging(fmt="json", stream=stream)
    get_logger("test").error("request failed", error=f"invalid_auth: {text}")
    assert "request failed" in stream.getvalue()
    assert secret not in stream.getvalue()

    # Traced: what Langfuse is sent.
    assert secret not in json.dumps(redact_everything({"input": [{"content": text}]}))
    assert secret not in redact_secret_shapes(text)


def test_a_workspaces_tokens_are_scrubbed_from_logs_like_orions_own() -> None:
    """Distribution mode holds a bot token (and, with token rotation, a refresh token) per
    installed workspace, none of them registered as Orion's own at start-up: a library
    error quoting one, or a request logged with its headers, keeps none of them."""
    bot = "xoxb-7000000001-7000000002-WorkspaceBotTokenAbCdEf"
    refresh = "xoxe-1-My0xLTcwMDAwMDAwMDEtNzAwMDAwMDAwMi1SZWZyZXNo"
    rotated = "xoxe.xoxb-1-MS0yLTcwMDAwMDAwMDEtUm90YXRlZEJvdA"
    stream = io.StringIO()
    configure_logging(fmt="json", stream=stream)
    log = get_logger("slack_sdk.web.async_base_client")
    log.warning("refresh failed", headers={"Authorization": f"Bearer {bot}"}, token=refresh)
    log.error("chat.postMessage failed", error=f"The server responded with: {rotated}")
    logged = stream.getvalue()
    assert "refresh failed" in logged and "chat.postMessage failed" in logged
    for token in (bot, refresh, rotated):
        assert token not in logged
