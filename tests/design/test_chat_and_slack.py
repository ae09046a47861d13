"""`orion chat` talks to the same agent and memory as Slack (docs/interface.md, "Commands"):
what a person tells Orion in the terminal, Orion knows when the same person opens a thread in
Slack over the same memory (the default `MEMORY_DIR`, `.orion/memories`), and Claude is sent it
on their first question there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e import conversation
from tests.e2e.conversation import main_requests, remembered
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.claude_script import ScriptItem, text
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import run_orion_command
from tests.orion_server import OrionServer, make_settings

USER, CHANNEL = "U0SAMIRA", "D0SAMIRA"
SUMMARY_MODEL = "claude-haiku-summary-test"


def _summaries(body: dict[str, Any]) -> ScriptItem | None:
    if body["model"] == SUMMARY_MODEL:
        return text("# Getting started\nSamira introduced herself from a terminal.")
    return None


def test_what_a_person_tells_the_terminal_chat_greets_them_in_slack(
    tmp_path: Path, slack: FakeSlack, claude: FakeClaude
) -> None:
    # MEMORY_DIR unset: its default, `.orion/memories` where the command runs.
    memories = tmp_path / ".orion" / "memories"
    claude.responder = _summaries
    claude.reply("Nice to meet you, Samira.")
    env = {
        "ANTHROPIC_API_KEY": "sk-ant-design-chat",
        "ANTHROPIC_BASE_URL": claude.url,
        "SUMMARY_MODEL": SUMMARY_MODEL,
    }
    chat = run_orion_command(
        tmp_path, "chat", "--user", USER, env=env, stdin="Please call me Samira.\n"
    )
    assert chat.returncode == 0, chat.stderr
    assert "Nice to meet you, Samira." in chat.stdout

    settings = make_settings(slack, claude, memory_dir=memories, summary_model=SUMMARY_MODEL)
    with OrionServer(settings) as orion:
        thread_ts, greeting = conversation.open_thread(orion, slack, USER, CHANNEL)
        assert "Samira" in greeting
        claude.reply("Of course, Samira.")
        conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, "Who am I?")
        conversation.wait_for_answer(slack, CHANNEL, thread_ts, "Of course, Samira.")
        request = main_requests(claude, orion)[-1]

    assert "Samira" in remembered(request)
