"""Starting Orion with bad configuration: one clear message, no traceback, no secret."""

from __future__ import annotations

import re
import socket
import subprocess
from pathlib import Path

import pytest

from app.config import (
    NO_SLACK_APP_ADVICE,
    ConfigError,
    RunMode,
    Settings,
    StorageSettings,
    load_settings,
    read_settings,
)
from tests import log_events
from tests.orion_process import REPO, copied_env_example, run_orion_command

SECRET = "xoxp-this-is-a-very-secret-user-token"


def _run_orion(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_orion_command(tmp_path, *args, env=env)


def test_missing_configuration_lists_every_missing_variable(tmp_path: Path) -> None:
    result = _run_orion(tmp_path)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    for name in ("SLACK_BOT_TOKEN", "ANTHROPIC_API_KEY", "SLACK_SIGNING_SECRET"):
        assert f"  - {name}: missing" in result.stderr


def test_without_slack_tokens_the_message_offers_the_chat_and_socket_mode(
    tmp_path: Path,
) -> None:
    # A first run with nothing set: the way in without a Slack app, and which token picks
    # which mode, follow the list of what is missing.
    result = _run_orion(tmp_path)

    problems, _, advice = result.stderr.partition("\n\n")
    assert problems.startswith("Orion cannot start; fix these")
    assert advice == NO_SLACK_APP_ADVICE + "\n"
    assert "`scripts/uv run orion chat`" in advice, "the command as it runs from a clone"
    assert "needs only ANTHROPIC_API_KEY" in advice
    assert "SLACK_APP_TOKEN (xapp-…) selects Socket Mode" in advice


def test_with_slack_configured_no_advice_about_slack_is_given(tmp_path: Path) -> None:
    result = _run_orion(
        tmp_path, "serve", SLACK_BOT_TOKEN="xoxb-1-test", SLACK_SIGNING_SECRET="s", PORT="x"
    )
    assert result.returncode == 2
    assert "PORT" in result.stderr and NO_SLACK_APP_ADVICE not in result.stderr


@pytest.mark.parametrize("where", ["the environment", ".env"])
def test_an_empty_anthropic_key_is_missing_not_set(tmp_path: Path, where: str) -> None:
    # `ANTHROPIC_API_KEY=` would otherwise pass, and the SDK send `Authorization: Bearer `.
    env = {"SLACK_BOT_TOKEN": "xoxb-1-test", "SLACK_SIGNING_SECRET": "start-up-test-secret"}
    if where == ".env":
        (tmp_path / ".env").write_text("ANTHROPIC_API_KEY=\n")
    else:
        env["ANTHROPIC_API_KEY"] = ""

    result = _run_orion(tmp_path, "serve", **env)

    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr == "Orion cannot start — ANTHROPIC_API_KEY: missing (required); " + (
        "see .env.example\n"
    )


@pytest.mark.parametrize("where", ["the environment", ".env"])
def test_a_key_of_spaces_is_invalid_at_start(tmp_path: Path, where: str) -> None:
    # Not empty, so not ignored as empty: it would pass and fail every request to Claude.
    env = {"SLACK_BOT_TOKEN": "xoxb-1-test", "SLACK_SIGNING_SECRET": "start-up-test-secret"}
    if where == ".env":
        (tmp_path / ".env").write_text('ANTHROPIC_API_KEY="   "\n')  # unquoted: empty
    else:
        env["ANTHROPIC_API_KEY"] = "   "

    result = _run_orion(tmp_path, "serve", **env)

    assert result.returncode == 2
    assert result.stderr == (
        "Orion cannot start — ANTHROPIC_API_KEY: only whitespace, not a value; see .env.example\n"
    )


def test_a_mistyped_slack_token_gets_no_advice_for_those_without_an_app(
    tmp_path: Path,
) -> None:
    result = _run_orion(
        tmp_path,
        "serve",
        SLACK_BOT_TOKEN="xoxp-a-user-token-pasted-instead",
        SLACK_SIGNING_SECRET="start-up-test-secret",
        ANTHROPIC_API_KEY="sk-ant-test",
    )

    assert result.returncode == 2
    assert result.stderr == (
        "Orion cannot start — SLACK_BOT_TOKEN: must be a bot token starting with xoxb-; "
        "see .env.example\n"
    )


@pytest.mark.parametrize(
    ("command", "given", "line"),
    [
        (
            "serve",
            {"SLACK_BOT_TOKEN": "xoxb-1-test"},
            "SLACK_SIGNING_SECRET: missing (required in HTTP mode): copy the app's Signing "
            "Secret from its Basic Information page, or use Socket Mode (SLACK_APP_TOKEN), "
            "which needs none",
        ),
        (
            "serve",
            {"SLACK_SIGNING_SECRET": "start-up-test-secret"},
            "SLACK_BOT_TOKEN: missing (required): copy the app's Bot User OAuth Token (xoxb-…) "
            "from its OAuth & Permissions page, with the app installed",
        ),
        (
            "socket",
            {"SLACK_BOT_TOKEN": "xoxb-1-test"},
            "SLACK_APP_TOKEN: missing (required in Socket Mode): create an app-level token "
            "(xapp-…) with connections:write on the app's Basic Information page",
        ),
    ],
)
def test_with_one_of_the_two_slack_tokens_one_line_says_where_the_other_is(
    tmp_path: Path, command: str, given: dict[str, str], line: str
) -> None:
    # Someone with a Slack app, one token copied: not the advice for those without an app.
    result = _run_orion(tmp_path, command, ANTHROPIC_API_KEY="sk-ant-test", **given)

    assert result.returncode == 2
    assert result.stderr == f"Orion cannot start — {line}; see .env.example\n"


@pytest.mark.parametrize(
    ("given", "bucket"),
    [
        ("orion-memories", "orion-memories"),
        ("gs://orion-memories", "orion-memories"),
        ("gs://orion-memories/", "orion-memories"),
    ],
)
def test_a_bucket_is_named_with_or_without_gs(given: str, bucket: str) -> None:
    # As the console and gcloud show it: gs://NAME. Never gs://gs://NAME.
    settings = read_settings(StorageSettings, _env_file=None, gcs_memories_bucket=given)
    assert settings.gcs_memories_bucket == bucket
    assert settings.store_location() == f"gs://{bucket}"


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ("gs://orion-memories/people", "names a folder inside a bucket"),
        ("Orion_Memories", "not a Cloud Storage bucket name"),
    ],
)
def test_a_bucket_that_cannot_be_one_is_refused_at_start(given: str, problem: str) -> None:
    with pytest.raises(ConfigError) as refused:
        read_settings(StorageSettings, _env_file=None, gcs_memories_bucket=given)
    [line] = refused.value.problems
    assert line.startswith(f"GCS_MEMORIES_BUCKET: {problem}")


def test_a_port_in_use_stops_serve_in_one_line_before_it_says_it_serves(
    tmp_path: Path,
) -> None:
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = _run_orion(
            tmp_path,
            "serve",
            SLACK_BOT_TOKEN="xoxb-1-test",
            SLACK_SIGNING_SECRET="start-up-test-secret",
            ANTHROPIC_API_KEY="sk-ant-test",
            PORT=str(port),
            MEMORY_DIR=str(tmp_path / "memories"),
        )

    assert result.returncode == 2
    shown = [line for line in result.stderr.splitlines() if not line.startswith("{")]
    assert shown == [
        f"Orion cannot start — PORT: {port} is in use (another Orion, or another program, "
        "listens on it): stop that, or set PORT to a free port"
    ]
    assert "Traceback" not in result.stdout + result.stderr
    assert log_events.ORION_SERVING not in result.stdout + result.stderr


def test_socket_mode_requires_the_app_token(tmp_path: Path) -> None:
    result = _run_orion(tmp_path, "socket")
    assert result.returncode == 2
    assert "SLACK_APP_TOKEN: missing" in result.stderr
    assert "SLACK_SIGNING_SECRET:" not in result.stderr


# What `.env.example` asks a newcomer to fill in for Socket Mode (docs/slack-setup.md),
# each replaced with a value of the right shape; everything else stays as copied.
_FILLED_FOR_SOCKET_MODE = {
    "SLACK_BOT_TOKEN": "xoxb-1-filled-in",
    "SLACK_APP_TOKEN": "xapp-1-A0FILLED-0000-filled-in",
    "ANTHROPIC_API_KEY": "sk-ant-filled-in",
}


@pytest.mark.parametrize("mode", [None, RunMode.SOCKET])
def test_socket_mode_ignores_the_signing_secret_left_as_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: RunMode | None
) -> None:
    # `cp .env.example .env`, the three values the Slack setup names filled in: the
    # signing secret keeps its example value, which Socket Mode never uses.
    (tmp_path / ".env").write_text(copied_env_example(_FILLED_FOR_SOCKET_MODE))
    _only_dotenv(tmp_path, monkeypatch)

    settings = load_settings(mode)

    assert settings.default_mode() is RunMode.SOCKET
    assert settings.slack_signing_secret is None


def test_http_mode_still_refuses_the_signing_secret_left_as_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    filled = {k: v for k, v in _FILLED_FOR_SOCKET_MODE.items() if k != "SLACK_APP_TOKEN"}
    (tmp_path / ".env").write_text(copied_env_example(filled))
    _only_dotenv(tmp_path, monkeypatch)

    for mode in (None, RunMode.HTTP):
        with pytest.raises(ConfigError) as refused:
            load_settings(mode)
        assert refused.value.problems == [
            "SLACK_SIGNING_SECRET: still the example value from .env.example, not a real "
            "one: copy the app's Signing Secret from its Basic Information page, or use "
            "Socket Mode (SLACK_APP_TOKEN), which needs none"
        ]


def test_a_claude_address_without_http_stops_the_chat_instead_of_reading_as_an_outage(
    tmp_path: Path,
) -> None:
    # Typed as the stand-in prints it, less the scheme: every answer would be "I couldn't
    # reach my language model just now. Please try again", which no retry mends.
    result = _run_orion(
        tmp_path,
        "chat",
        ANTHROPIC_API_KEY="sk-ant-start-up-test",
        ANTHROPIC_BASE_URL="127.0.0.1:8765",
    )

    assert result.returncode == 2
    assert result.stderr == (
        "orion chat cannot start — ANTHROPIC_BASE_URL: must be a web address starting with "
        "http:// or https://; see .env.example\n"
    )
    assert result.stdout == ""


def test_half_of_langfuses_keys_stops_the_chat_as_it_stops_serving(tmp_path: Path) -> None:
    # With one key only, nothing would be traced, and nothing would say so.
    result = _run_orion(
        tmp_path,
        "chat",
        ANTHROPIC_API_KEY="sk-ant-start-up-test",
        LANGFUSE_PUBLIC_KEY="pk-lf-start-up-test",
    )

    assert result.returncode == 2
    assert result.stderr == (
        "orion chat cannot start — LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY: set both or "
        "neither; see .env.example\n"
    )


@pytest.mark.parametrize(
    "name",
    [
        "SLACK_API_URL",
        "SLACK_AUTHORIZE_URL",
        "SLACK_OAUTH_REDIRECT_URL",
        "ANTHROPIC_BASE_URL",
        "LANGFUSE_BASE_URL",
    ],
)
@pytest.mark.parametrize("given", ["slack.com/api/", "ftp://files.example/", "https:///api/"])
def test_every_web_address_setting_is_refused_without_http(name: str, given: str) -> None:
    with pytest.raises(ConfigError) as refused:
        read_settings(Settings, _env_file=None, anthropic_api_key="k", **{name.lower(): given})
    assert refused.value.problems == [
        f"{name}: must be a web address starting with http:// or https://"
    ]
    assert given not in str(refused.value)


def test_web_addresses_with_http_or_https_are_taken_as_given() -> None:
    settings = read_settings(
        Settings,
        _env_file=None,
        anthropic_api_key="k",
        anthropic_base_url="http://127.0.0.1:8765",
        slack_api_url="https://slack.example/api/",
    )
    assert settings.anthropic_base_url == "http://127.0.0.1:8765"
    assert settings.slack_api_url == "https://slack.example/api/"


def _only_dotenv(directory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings read from `directory`'s .env alone: no variable of the test's own
    environment takes part."""
    monkeypatch.chdir(directory)
    for name in Settings.model_fields:
        monkeypatch.delenv(name.upper(), raising=False)


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
    assert "SLACK_BOT_TOKEN:" not in result.stderr  # provided by .env
    assert "PORT" in result.stderr


@pytest.mark.parametrize("command", [[], ["chat"], ["migrate"]])
@pytest.mark.parametrize("encoding", ["utf-16", "cp1252"])
def test_a_dotenv_that_is_not_utf8_is_said_in_one_line(
    tmp_path: Path, command: list[str], encoding: str
) -> None:
    # Windows PowerShell 5's `echo ANTHROPIC_API_KEY=… > .env` writes UTF-16 (with its BOM);
    # an older editor saves Latin-1 or cp1252 (here a comment's "café").
    text = "# café\nANTHROPIC_API_KEY=sk-ant-powershell\nSLACK_BOT_TOKEN=xoxb-1-test\n"
    (tmp_path / ".env").write_bytes(text.encode(encoding))

    result = _run_orion(tmp_path, *command)

    assert result.returncode == 2
    who = {"chat": "orion chat cannot start", "migrate": "orion migrate stopped"}
    assert result.stderr == (
        f"{who.get(''.join(command), 'Orion cannot start')} — .env: not UTF-8 text; save it "
        "as UTF-8 (Windows PowerShell's `>` writes UTF-16); see .env.example\n"
    )
    assert result.stdout == ""


def test_values_ending_in_a_carriage_return_are_named_before_they_fail_every_request(
    tmp_path: Path,
) -> None:
    # `set -a; source .env` (or `export $(cat .env)`) with Windows line endings: each value
    # ends in \r. The key would pass start-up and every answer read "I couldn't reach my
    # language model just now. Please try again".
    crlf = "ends in a carriage return, as a line of a file with Windows line endings does"
    result = _run_orion(tmp_path, "chat", ANTHROPIC_API_KEY="sk-ant-sourced\r")

    assert result.returncode == 2
    assert result.stderr.startswith(f"orion chat cannot start — ANTHROPIC_API_KEY: {crlf}")
    assert len(result.stderr.splitlines()) == 1 and "sk-ant-sourced" not in result.stderr

    served = _run_orion(
        tmp_path, "serve", ANTHROPIC_API_KEY="k", SLACK_BOT_TOKEN="xoxb-1\r", PORT="8080\r"
    )
    assert served.returncode == 2
    assert f"  - SLACK_BOT_TOKEN: {crlf}" in served.stderr
    assert f"  - PORT: {crlf}" in served.stderr
    with pytest.raises(ConfigError) as refused:
        read_settings(Settings, _env_file=None, anthropic_api_key="sk-ant-a\tb")
    assert refused.value.problems == [
        "ANTHROPIC_API_KEY: holds a control character (a tab or a line break): remove it"
    ]


def test_the_example_values_of_env_example_are_refused_by_name(tmp_path: Path) -> None:
    # A newcomer copies .env.example to .env — even uncommenting every optional line that
    # holds an example value — and starts Orion before filling anything in.
    example = (REPO / ".env.example").read_text()
    lines = [line.removeprefix("# ") for line in example.splitlines()]
    examples = {
        name: value
        for name, _, value in (line.partition("=") for line in lines)
        if name.isupper() and "your-" in value
    }
    (tmp_path / ".env").write_text("".join(f"{n}={v}\n" for n, v in examples.items()))

    result = _run_orion(tmp_path, "serve")

    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert {"SLACK_BOT_TOKEN", "ANTHROPIC_API_KEY", "LANGFUSE_SECRET_KEY"} <= set(examples)
    for name, value in examples.items():
        assert f"{name}: still the example value from .env.example" in result.stderr
        assert value not in result.stderr + result.stdout


def test_a_copied_env_example_with_only_the_claude_key_is_offered_the_chat(
    tmp_path: Path,
) -> None:
    # The README's "Try it": `cp .env.example .env`, set ANTHROPIC_API_KEY; then `orion`.
    # Slack's lines still hold the example values: no Slack app yet, as with none set.
    (tmp_path / ".env").write_text(copied_env_example({"ANTHROPIC_API_KEY": "sk-ant-newcomer"}))

    result = _run_orion(tmp_path)

    assert result.returncode == 2
    problems, _, advice = result.stderr.partition("\n\n")
    assert problems == (
        "Orion cannot start; fix these (see .env.example):\n"
        "  - SLACK_BOT_TOKEN: still the example value from .env.example, not a real one\n"
        "  - SLACK_SIGNING_SECRET: still the example value from .env.example, not a real one"
    )
    assert advice == NO_SLACK_APP_ADVICE + "\n"


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_an_unusable_memory_directory_stops_start_up_in_one_line(
    tmp_path: Path, where: str
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    memories = blocker if where == "a file" else blocker / "memories"

    result = _run_orion(
        tmp_path,
        "serve",
        SLACK_BOT_TOKEN="xoxb-start-up-test",
        SLACK_SIGNING_SECRET="start-up-test-secret",
        ANTHROPIC_API_KEY="sk-ant-start-up-test",
        MEMORY_DIR=str(memories),
    )

    assert result.returncode == 2
    problem = "is not a directory" if where == "a file" else "cannot be created"
    assert result.stderr == (
        f"Orion cannot start — MEMORY_DIR: {memories} {problem} (Not a directory); "
        "see .env.example\n"
    )
    assert result.stdout == ""


def test_help_lists_every_command(tmp_path: Path) -> None:
    result = _run_orion(tmp_path, "--help")

    assert result.returncode == 0
    listed = re.findall(r"^ {4}(\w+) ", result.stdout, flags=re.MULTILINE)
    assert listed == ["serve", "socket", "chat", "migrate", "memory"]


@pytest.mark.parametrize(
    ("argv", "problem", "prog"),
    [
        (["chatt"], "orion cannot run — argument [COMMAND]: invalid choice: 'chatt'", "orion"),
        (
            ["memory", "show"],
            "orion memory cannot run — the following arguments are required: user_id",
            "orion memory",
        ),
        (
            # Said by the command that does not take it, with the option nearest to it.
            ["chat", "--usr", "U0123ABCD"],
            "orion chat cannot run — unrecognized arguments: --usr U0123ABCD "
            "(did you mean --user?)",
            "orion chat",
        ),
    ],
)
def test_a_mistyped_command_is_said_in_one_line(
    tmp_path: Path, argv: list[str], problem: str, prog: str
) -> None:
    # Not argparse's usage block of every option above the line that matters. (How
    # argparse lists the choices varies with the Python release.)
    result = _run_orion(tmp_path, *argv)

    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith(problem)
    assert line.endswith(f"; see `{prog} --help`")
    assert result.stdout == ""


def test_distribution_mode_needs_no_bot_token_but_both_client_credentials(
    tmp_path: Path,
) -> None:
    result = _run_orion(
        tmp_path, "serve", SLACK_CLIENT_ID="1111.2222", ANTHROPIC_API_KEY="sk-ant-x"
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "SLACK_CLIENT_SECRET: missing (required with SLACK_CLIENT_ID)" in result.stderr
    assert "SLACK_SIGNING_SECRET: missing" in result.stderr
    assert "SLACK_BOT_TOKEN" not in result.stderr


def test_socket_mode_in_distribution_mode_is_a_clear_configuration_error(
    tmp_path: Path,
) -> None:
    secret = "client-secret-never-printed-0123"
    result = _run_orion(
        tmp_path,
        "socket",
        SLACK_CLIENT_ID="1111.2222",
        SLACK_CLIENT_SECRET=secret,
        SLACK_APP_TOKEN="xapp-start-up-test",
        ANTHROPIC_API_KEY="sk-ant-x",
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "Socket Mode serves one workspace" in result.stderr
    assert "distribution mode" in result.stderr and "runs over HTTP only" in result.stderr
    assert secret not in result.stderr + result.stdout


def test_a_thinking_setting_the_api_would_refuse_stops_start_up_by_name(tmp_path: Path) -> None:
    env = {"SLACK_BOT_TOKEN": "xoxb-1-test", "SLACK_SIGNING_SECRET": "s", "ANTHROPIC_API_KEY": "k"}
    # xhigh or max effort with thinking off is a 400 on every answer: refused before it is.
    result = _run_orion(tmp_path, "serve", **env, ANTHROPIC_EFFORT="max", SUMMARY_THINKING="off")
    assert result.returncode == 2, result.stderr
    assert "ANTHROPIC_EFFORT: max needs ANTHROPIC_THINKING=adaptive" in result.stderr
    assert "SUMMARY_THINKING: Input should be 'between_tools', 'adaptive' or 'disabled'" in (
        result.stderr
    )
    assert "Traceback" not in result.stderr
