"""`slack run` from a clone: the Slack CLI's hooks in .slack/hooks.json, run the way the CLI
runs them (the command split on spaces, in the project's directory, the manifest read from
stdout; the start hook with the CLI's tokens in SLACK_CLI_XOXB and SLACK_CLI_XAPP)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import REPO, OrionProcess, copied_env_example, free_port
from tests.test_manifest import AGENT_MANIFEST, schema_errors

HOOKS = json.loads((REPO / ".slack" / "hooks.json").read_text())
CLI_BOT_TOKEN = "xoxb-from-the-slack-cli"
CLI_APP_TOKEN = "xapp-1-A0CLI-0000-from-the-slack-cli"
USER, CHANNEL = "U0CLIUSER", "D0CLIUSER"


def _command(hook: str) -> list[str]:
    return HOOKS["hooks"][hook].split()


@pytest.fixture(scope="module")
def manifest() -> dict[str, Any]:
    hook = subprocess.run(
        _command("get-manifest"), cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert hook.returncode == 0, hook.stderr
    return json.loads(hook.stdout)  # stdout holds the manifest and nothing else


def test_the_manifest_hook_hands_the_cli_a_valid_socket_mode_manifest(
    manifest: dict[str, Any],
) -> None:
    assert schema_errors(manifest) == []
    settings = manifest["settings"]
    assert settings["socket_mode_enabled"] is True
    assert "request_url" not in settings["event_subscriptions"]
    assert "request_url" not in settings["interactivity"]


def test_the_manifest_hook_serves_manifest_agent_yaml(manifest: dict[str, Any]) -> None:
    source = yaml.safe_load(AGENT_MANIFEST.read_text(encoding="utf-8"))
    for section in ("_metadata", "display_information", "features", "oauth_config"):
        assert manifest[section] == source[section]
    settings, source_settings = manifest["settings"], source["settings"]
    assert (
        settings["event_subscriptions"]["bot_events"]
        == (source_settings["event_subscriptions"]["bot_events"])
    )
    assert settings["interactivity"]["is_enabled"] is True


def test_the_cli_manages_nothing_orion_does_not(tmp_path: Path) -> None:
    # Orion opens the Socket Mode connection itself, and the CLI watches the manifest.
    assert HOOKS["config"]["sdk-managed-connection-enabled"] is True
    assert _command("start")[0] == ".slack/start"
    assert os.access(REPO / ".slack" / "start", os.X_OK)


def test_the_cli_restarts_orion_on_code_changes_and_reinstalls_on_manifest_changes() -> None:
    # The format of the CLI's hooks reference ("Watch configurations"): an `app` watcher
    # restarts the start hook, a `manifest` one reinstalls. The older top-level `paths` and
    # `filter-regex` are manifest watching only: no restart on code changes.
    watch = HOOKS["config"]["watch"]
    assert set(watch) == {"app", "manifest"}
    assert watch["manifest"] == {"paths": ["manifest.agent.yaml"]}
    assert (REPO / "manifest.agent.yaml").is_file()
    app = watch["app"]
    assert app["paths"] == ["app/"] and (REPO / "app").is_dir()
    # The CLI matches the filter against a changed file's base name.
    code = re.compile(app["filter-regex"])
    assert code.search("answering.py") and not code.search("notes.md")
    assert not code.search("chat.log") and not code.search("answering.pyc")


def test_what_the_cli_writes_into_the_clone_is_ignored_by_git() -> None:
    written = [".slack/apps.dev.json", ".slack/cache/manifests.json", ".slack/config.json"]
    check = subprocess.run(
        ["git", "check-ignore", *written], cwd=REPO, capture_output=True, text=True
    )
    assert check.stdout.split() == written, check.stderr


def test_the_start_hook_runs_orion_over_socket_mode_with_the_cli_tokens(
    tmp_path: Path, claude: FakeClaude
) -> None:
    with FakeSlack(socket_mode=True, agent_view=True) as slack:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": os.environ.get("HOME", str(tmp_path)),
            "SLACK_CLI_XOXB": CLI_BOT_TOKEN,
            "SLACK_CLI_XAPP": CLI_APP_TOKEN,
            # Tokens of another app, left in the shell: the CLI's app is the one to run.
            "SLACK_BOT_TOKEN": "xoxb-of-another-app",
            "SLACK_APP_TOKEN": "xapp-1-A0OTHER-0000-of-another-app",
            "SLACK_API_URL": slack.url,
            "ANTHROPIC_BASE_URL": claude.url,
            "ANTHROPIC_MAX_RETRIES": "0",
            "MEMORY_DIR": str(tmp_path / "memories"),
            "LOG_FORMAT": "json",
            "PORT": str(free_port()),
        }
        # Run from a directory of its own, so no developer's .env is read — but a .env
        # as the Slack setup leaves it: copied from .env.example with only the Claude key
        # filled in (the signing secret keeps its example value; Socket Mode ignores it).
        (tmp_path / ".env").write_text(copied_env_example({"ANTHROPIC_API_KEY": "sk-ant-cli"}))
        hook = str(REPO / _command("start")[0])
        orion = OrionProcess(env, cwd=tmp_path, log_path=tmp_path / "orion.log", argv=[hook])
        try:
            orion.start()
            server = slack.socket_mode
            assert server is not None
            server.wait_connected(timeout=120)
            claude.reply("Hello from slack run.")
            ts = slack.add_user_message(CHANNEL, None, USER, "hi")
            server.send_events_api(events.top_level_dm(USER, CHANNEL, "hi", ts=ts))
            slack.wait_for(
                lambda: [m for m in slack.bot_messages(CHANNEL, ts) if not m.streaming],
                timeout=60,
                what="the answer",
            )
        finally:
            exit_code = orion.stop()

    assert exit_code == 0, orion.log()
    [answer] = slack.bot_messages(CHANNEL, ts)
    assert answer.text == "Hello from slack run."
    [connection] = slack.calls_to("apps.connections.open")
    assert connection.headers["Authorization"] == f"Bearer {CLI_APP_TOKEN}"
    bot_calls = [call for call in slack.calls if call.method != "apps.connections.open"]
    assert {call.headers["Authorization"] for call in bot_calls} == {f"Bearer {CLI_BOT_TOKEN}"}
    # Agent messaging (manifest.agent.yaml): the conversation's session went to work.
    session = slack.session(CHANNEL, ts)
    assert session is not None and session.statuses[0] == "processing"
