"""`orion chat`: a newcomer talks to Orion in a terminal, the real process, no Slack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.claude_script import ScriptItem, text
from tests.orion_process import run_orion_command

USER = "U0NEWCOMER"
SUMMARY_MODEL = "claude-haiku-summary-test"


def _chat(tmp_path: Path, claude: FakeClaude, stdin: str, *args: str):
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-chat-test",
        "ANTHROPIC_BASE_URL": claude.url,
        "SUMMARY_MODEL": SUMMARY_MODEL,
        "MEMORY_DIR": str(tmp_path / "memories"),
    }
    return run_orion_command(tmp_path, "chat", *args, env=env, stdin=stdin)


def test_a_conversation_in_the_terminal_streams_answers_and_leaves_memories(
    tmp_path: Path,
) -> None:
    with FakeClaude() as claude:

        def respond(body: dict[str, Any]) -> ScriptItem | None:
            if body["model"] == SUMMARY_MODEL:
                return text("# Terminal chat\nSam tried Orion from a terminal.")
            return None

        claude.responder = respond
        claude.reply("Nice to meet you, Sam. " * 30)  # long enough to stream in pieces
        claude.reply("You asked me to call you Sam.")
        result = _chat(tmp_path, claude, "Please call me Sam.\nWhat is my name?\n", "--user", USER)
        requests = [r for r in claude.requests if r["model"] != SUMMARY_MODEL]

    assert result.returncode == 0, result.stderr
    assert "Nice to meet you, Sam." in result.stdout
    assert "You asked me to call you Sam." in result.stdout
    assert "Traceback" not in result.stderr
    # The second question reached Claude with the first exchange as history, and tools.
    second = requests[-1]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert {"memory", "recall"} <= {tool["name"] for tool in second["tools"]}
    # What the conversation taught Orion is where the farewell says it is.
    person = tmp_path / "memories" / "users" / USER
    assert f"Memories about {USER} are in {person.resolve()}" in result.stdout
    preferences = json.loads((person / "preferences.json").read_text())
    assert preferences["name"] == "Sam"
    records = tmp_path / "memories" / "people" / USER
    assert "Terminal chat" in (records / "conversations.json").read_text()


def test_a_bad_user_id_is_refused_clearly(tmp_path: Path) -> None:
    with FakeClaude() as claude:
        result = _chat(tmp_path, claude, "", "--user", "../../etc")
    assert result.returncode == 2 and "Not a Slack-style user id" in result.stderr
