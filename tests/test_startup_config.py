"""Starting Orion with bad configuration: one clear message, no traceback, no secret."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.orion_process import run_orion_command

SECRET = "xoxp-this-is-a-very-secret-user-token"


def _run_orion(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_orion_command(tmp_path, *args, env=env)


def test_missing_configuration_lists_every_missing_variable(tmp_path: Path) -> None:
    result = _run_orion(tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    for name in ("SLACK_BOT_TOKEN", "ANTHROPIC_API_KEY", "SLACK_SIGNING_SECRET"):
        assert name in result.stderr


def test_socket_mode_requires_the_app_token(tmp_path: Path) -> None:
    result = _run_orion(tmp_path, "socket")
    assert result.returncode == 2
    assert "SLACK_APP_TOKEN" in result.stderr
    assert "SLACK_SIGNING_SECRET" not in result.stderr


def test_invalid_values_are_named_without_echoing_them(tmp_path: Path) -> None:
    result = _run_orion(
        tmp_path, "serve", SLACK_BOT_TOKEN=SECRET, ANTHROPIC_API_KEY="sk-ant-x", PORT="eighty"
    )
    assert result.returncode == 2
    assert "SLACK_BOT_TOKEN: must be a bot token starting with xoxb-" in result.stderr
    assert "PORT" in result.stderr
    assert SECRET not in result.stderr + result.stdout
    assert "Traceback" not in result.stderr


def test_dotenv_file_is_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("SLACK_BOT_TOKEN=xoxb-from-dotenv\nPORT=bad\n")
    result = _run_orion(tmp_path, "serve")
    assert "SLACK_BOT_TOKEN" not in result.stderr  # provided by .env
    assert "PORT" in result.stderr
