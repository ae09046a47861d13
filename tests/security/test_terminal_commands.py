"""The commands a person types, attacked through what they print and what they are given:
stored words that would drive the terminal, arguments far longer than any id, and a
forged user id for an erasure.

`orion chat` prints stored words (a name, a preference, the welcome a model wrote) and
Claude's answer, which may quote them; a person or a prompt-injected Claude may have
stored escape sequences that clear the screen, retitle the window or rewrite a line. The
commands run as real processes; what they wrote is checked byte for byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.config import QUOTED_CHARS
from app.memory.homes import person, preferences_key
from tests.fakes.anthropic_api import FakeClaude
from tests.orion_process import run_orion_command

USER = "U0ESCAPE"
# Clear the screen, set the window title, return to the line's start, flip the direction.
HOSTILE = "Sam\x1b[2J\x1b]0;owned\x07\r\u202eevil"
LONG_ID = "U" + "A" * 3000


def _chat(tmp_path: Path, claude: FakeClaude, stdin: str, *args: str):
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-terminal-attack",
        "ANTHROPIC_BASE_URL": claude.url,
        "ANTHROPIC_MAX_RETRIES": "0",
        "MEMORY_DIR": str(tmp_path / "memories"),
    }
    return run_orion_command(tmp_path, "chat", *args, env=env, stdin=stdin)


def test_stored_words_and_answers_cannot_drive_the_terminal(
    tmp_path: Path, claude: FakeClaude
) -> None:
    preferences = tmp_path / "memories" / preferences_key(USER)
    preferences.parent.mkdir(parents=True)
    preferences.write_text(json.dumps({"name": HOSTILE}))
    claude.reply(f"Your name is {HOSTILE}.")

    result = _chat(tmp_path, claude, "What is my name?\n", "--user", USER)

    assert result.returncode == 0, result.stderr
    for control in ("\x1b", "\x07", "\r", "\u202e"):
        assert control not in result.stdout
    assert "orion> Welcome back, Sam[2J]0;owned evil!" in result.stdout  # CR: a space
    assert "Your name is Sam[2J]0;ownedevil." in result.stdout


@pytest.mark.parametrize("command", ["chat", "memory"])
def test_a_3000_character_user_id_is_refused_without_being_printed_back(
    tmp_path: Path, claude: FakeClaude, command: str
) -> None:
    if command == "chat":
        result = _chat(tmp_path, claude, "", "--user", LONG_ID)
    else:
        (tmp_path / "memories").mkdir()
        env = {"MEMORY_DIR": str(tmp_path / "memories")}
        result = run_orion_command(tmp_path, "memory", "show", LONG_ID, env=env)

    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert "not a Slack user id" in line and "(3,001 characters)" in line
    assert LONG_ID[: QUOTED_CHARS + 1] not in line and len(line) < 200
    assert claude.requests == []


@pytest.mark.parametrize(
    "forged", [f"{USER}/../U0OTHER", "../people/U0OTHER", "u0escape", f"{USER} ", ""]
)
def test_a_forged_user_id_is_refused_before_anything_is_erased(tmp_path: Path, forged: str) -> None:
    # Not a Slack user id: no home is looked through, and nobody's erasure passes for done.
    memories = tmp_path / "memories"
    kept = {
        key: f"kept: {key}" for key in (person(USER).memory_prefix, person("U0OTHER").memory_prefix)
    }
    for prefix, content in kept.items():
        (memories / prefix).mkdir(parents=True)
        (memories / prefix / "notes.md").write_text(content)
    env = {"MEMORY_DIR": str(memories)}

    result = run_orion_command(tmp_path, "memory", "forget", forged, "--yes", env=env)

    assert result.returncode == 2
    assert result.stderr.startswith("orion memory cannot run — USER_ID: not a Slack user id")
    assert result.stdout == ""
    for prefix, content in kept.items():
        assert (memories / prefix / "notes.md").read_text() == content
