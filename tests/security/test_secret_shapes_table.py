"""Secrets that escaped redaction: one row per shape, each kept nowhere.

Every row is a secret as a person pastes it (or Claude names a memory file after it) that
the shapes of app/observability/secret_shapes.py once let through: tokens glued to a word
by `-` or `_`, keys of vendors no shape knew, `token` and `API key` labels, JSON `"token"`
fields, and password labels in the nine other languages Orion understands. Each row is
checked on every way out: the text as stored (the secret-free store every memory write
passes through), a memory file named after it, a log line quoting it, and what Langfuse is
sent.
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
