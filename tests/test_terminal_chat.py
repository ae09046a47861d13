"""`orion chat`: a newcomer talks to Orion in a terminal, the real process, no Slack.

Piped (stdin from a string) for what does not depend on a terminal; on a pseudo-terminal
(tests/terminal.py) for what a person at one does: Ctrl-C, long pastes, the spinner.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.agent.errors import BUSY, OVERLOADED
from app.learning import undo
from app.learning.welcome import Welcome
from app.memory.homes import person
from app.memory.scopes import is_thread_ts
from app.observability.redaction import redact_secret_shapes
from app.slack.conversation.greeting import GENERIC_GREETING
from app.terminal_chat.console import COMMANDS, NOTHING_TO_UNDO, ORION, STOPPED, UNDO_HINT
from app.terminal_chat.conversation import new_thread_ts
from app.terminal_chat.line_input import CONTINUATION, LineReader
from tests import log_events
from tests.e2e.memory_bucket import Bucket
from tests.fakes._waiting import wait_until
from tests.fakes.anthropic_api import FakeClaude, message_text
from tests.fakes.claude_script import ScriptItem, text
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.layout import messages_in, profile, summary_of_latest
from tests.orion_process import REPO, finish, free_port, run_orion_command
from tests.terminal import Terminal

USER = "U0NEWCOMER"
SUMMARY_MODEL = "claude-haiku-summary-test"
KEY = "sk-ant-chat-test-0123456789"
# Linux's canonical-mode line limit is 4,095 bytes; a paste well past it.
LONG_LINE = "paste " * 2000


def _env(tmp_path: Path, claude: FakeClaude, **more: str) -> dict[str, str]:
    return {
        "ANTHROPIC_API_KEY": KEY,
        "ANTHROPIC_BASE_URL": claude.url,
        "SUMMARY_MODEL": SUMMARY_MODEL,
        "MEMORY_DIR": str(tmp_path / "memories"),
        **more,
    }


def _chat(tmp_path: Path, claude: FakeClaude, stdin: str, *args: str, **env: str):
    return run_orion_command(
        tmp_path, "chat", *args, env=_env(tmp_path, claude, **env), stdin=stdin
    )


def _summaries(body: dict[str, Any]) -> ScriptItem | None:
    if body["model"] == SUMMARY_MODEL:
        return text("# Terminal chat\nSam tried Orion from a terminal.")
    return None


@pytest.fixture
def claude() -> Iterator[FakeClaude]:
    with FakeClaude() as fake:
        fake.responder = _summaries
        yield fake


def _questions(claude: FakeClaude) -> list[dict[str, Any]]:
    return [r for r in claude.requests if r["model"] != SUMMARY_MODEL]


def test_a_conversation_in_the_terminal_streams_answers_and_leaves_memories(
    tmp_path: Path, claude: FakeClaude
) -> None:
    claude.reply("Nice to meet you, Sam. " * 30)  # long enough to stream in pieces
    claude.reply("You asked me to call you Sam.")
    result = _chat(tmp_path, claude, "Please call me Sam.\nWhat is my name?\n", "--user", USER)
    requests = _questions(claude)

    assert result.returncode == 0, result.stderr
    assert "Nice to meet you, Sam." in result.stdout
    assert "You asked me to call you Sam." in result.stdout
    assert result.stderr == ""
    # The second question reached Claude with the first exchange as history, and tools.
    second = requests[-1]
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert {"memory", "recall"} <= {tool["name"] for tool in second["tools"]}
    # What the conversation taught Orion is where the farewell says it is: every folder.
    # All in the person's home: their memory, and Orion's records of them.
    home = (tmp_path / "memories").resolve() / "people" / USER
    memory = home / "memory"
    farewell = result.stdout[result.stdout.index(f"Memories about {USER} are in:") :]
    for folder in (memory, home):
        assert f"\n  {folder}/  (" in farewell
    preferences = json.loads((memory / "preferences.json").read_text())
    assert preferences["name"] == "Sam"
    records = (home / "profile.json").read_text()
    assert "Terminal chat" in records
    assert "Sam tried Orion from a terminal." in (summary_of_latest(records) or "")
    [conversation] = (home / "conversations").glob("*.json")
    assert [m.strip() for m in messages_in(conversation.read_text())] == [
        "Please call me Sam.",
        ("Nice to meet you, Sam. " * 30).strip(),
        "What is my name?",
        "You asked me to call you Sam.",
    ]
    # Orion's log lines went to the log file, not into the conversation.
    assert '"memory.after_turn"' in (tmp_path / ".orion" / "chat.log").read_text()


def test_the_terminal_prints_what_an_answer_saved_and_undo_puts_it_back(
    tmp_path: Path, claude: FakeClaude
) -> None:
    claude.reply_tool_use(
        "memory",
        {"command": "create", "path": f"/memories/users/{USER}/trip.md", "file_text": "Oslo\n"},
    )
    claude.reply("Saved your trip, Sam.")
    claude.reply("Nothing to save here.")

    result = _chat(
        tmp_path,
        claude,
        "Please call me Sam. Remember my trip to Oslo.\n/undo\n/undo\nWhat time is it?\n",
        "--user",
        USER,
    )

    assert result.returncode == 0, result.stderr
    out = result.stdout
    note = out[out.index("Saved your trip, Sam.") : out.index(undo.UNDONE)]
    assert "Saved to memory: trip.md" in note and "Saved to memory: preferences (name)" in note
    assert UNDO_HINT in note
    assert undo.ALREADY_UNDONE in out, "a second /undo changes nothing"
    after = out[out.index("Nothing to save here.") :]
    assert "Saved to memory" not in after, "an answer that saved nothing prints no note"
    memory = tmp_path / "memories" / "people" / USER / "memory"
    assert not (memory / "trip.md").exists() and not (memory / "preferences.json").exists()


def test_undo_after_an_answer_that_saved_nothing_leaves_the_earlier_answer_alone(
    tmp_path: Path, claude: FakeClaude
) -> None:
    claude.reply_tool_use(
        "memory",
        {"command": "create", "path": f"/memories/users/{USER}/trip.md", "file_text": "Oslo\n"},
    )
    claude.reply("Saved your trip.")
    claude.reply("Nothing to save here.")

    result = _chat(
        tmp_path, claude, "Remember my trip to Oslo.\nWhat time is it?\n/undo\n", "--user", USER
    )

    assert result.returncode == 0, result.stderr
    after = result.stdout[result.stdout.index("Nothing to save here.") :]
    assert NOTHING_TO_UNDO in after and undo.UNDONE not in result.stdout
    assert (tmp_path / "memories" / "people" / USER / "memory" / "trip.md").read_text() == (
        "Oslo\n"
    )


def test_a_bad_user_id_is_refused_clearly(tmp_path: Path, claude: FakeClaude) -> None:
    result = _chat(tmp_path, claude, "", "--user", "../../etc")
    assert result.returncode == 2
    assert result.stderr == (
        "orion chat cannot start — --user: not a Slack user id (like U0123ABCD): '../../etc'\n"
    )


def test_a_refused_key_says_what_to_fix_and_ends_the_chat(
    tmp_path: Path, claude: FakeClaude
) -> None:
    claude.fail(401, "authentication_error", "invalid x-api-key")

    result = _chat(tmp_path, claude, "hello\nanyone there?\n")

    assert result.returncode == 2
    assert result.stderr == (
        "orion chat stopped — ANTHROPIC_API_KEY: Claude refused it (401 authentication_error); "
        "create a key at console.anthropic.com and set it; see .env.example\n"
    )
    assert "Please try again" not in result.stdout
    assert "Memories about" not in result.stdout
    assert KEY not in result.stdout + result.stderr
    assert len(_questions(claude)) == 1, "the chat ended at the first refusal"
    # The log keeps what happened, with the SDK's error (and never the key).
    log = (tmp_path / ".orion" / "chat.log").read_text()
    [refused] = [
        json.loads(line) for line in log.splitlines() if log_events.CHAT_CLAUDE_REFUSED in line
    ]
    assert (refused["status"], refused["error_type"]) == (401, "authentication_error")
    assert "AuthenticationError" in refused["exception"] and KEY not in log


@pytest.mark.parametrize(
    ("message", "model", "or_the_address"),
    [
        ("model: claude-sonet-4", "claude-sonet-4", False),
        ("Not found", "claude-sonet-4", True),
        ("Not found", None, True),  # the default model: not the one to blame or unset
    ],
)
def test_a_model_claude_does_not_have_says_which_setting_and_ends_the_chat(
    tmp_path: Path, claude: FakeClaude, message: str, model: str | None, or_the_address: bool
) -> None:
    # A typo in ANTHROPIC_MODEL: every answer would be "something went wrong on my side
    # ... Please try again", which no retry mends. Claude's 404 says "model: …" for some
    # keys and "Not found" for others, as for an address ending in /v1.
    claude.fail(404, "not_found_error", message)
    # Thinking off: FakeClaude takes an id it does not know for an older model, which
    # refuses the default thinking (400) before its scripted 404 is reached.
    typo = {"ANTHROPIC_MODEL": model, "ANTHROPIC_THINKING": "disabled"} if model else {}

    result = _chat(tmp_path, claude, "hello\nanyone there?\n", **typo)

    assert result.returncode == 2
    named = model or "claude-sonnet-5-5"
    expected = (
        f"ANTHROPIC_MODEL: Claude has no model {named!r} (404 not_found_error); set a "
        "current model's id"
    ) + (", or unset it for the default (claude-sonnet-5-5)" if model else "")
    address = (
        f"ANTHROPIC_BASE_URL: {claude.url!r} answered 404 not_found_error naming no model: "
        "give Claude's API without /v1, or unset it; or "
    )
    assert result.stderr == (
        f"orion chat stopped — {address if or_the_address else ''}{expected}; see .env.example\n"
    )
    assert "Please try again" not in result.stdout
    assert len(_questions(claude)) == 1, "the chat ended at the first refusal"


def test_the_farewell_names_the_memories_only_when_something_was_written(
    tmp_path: Path, claude: FakeClaude
) -> None:
    nothing_said = _chat(tmp_path, claude, "")
    memory_off = _chat(tmp_path, claude, "Please call me Sam.\n", MEMORY_ENABLED="false")

    for result in (nothing_said, memory_off):
        assert result.returncode == 0, result.stderr
        assert "Memories about" not in result.stdout
    assert "Saving what this conversation taught" not in memory_off.stdout
    assert not (tmp_path / "memories" / "people").exists()


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_an_unusable_memory_directory_stops_the_chat_before_it_starts(
    tmp_path: Path, claude: FakeClaude, where: str
) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    memories = blocker if where == "a file" else blocker / "memories"

    result = _chat(tmp_path, claude, "hello\n", MEMORY_DIR=str(memories))

    assert result.returncode == 2
    problem = "is not a directory" if where == "a file" else "cannot be created"
    assert result.stderr == (
        f"orion chat cannot start — MEMORY_DIR: {memories} {problem} (Not a directory); "
        "see .env.example\n"
    )
    assert claude.requests == []


def test_a_memory_dir_under_home_written_with_a_tilde_in_dotenv_is_under_home(
    tmp_path: Path, claude: FakeClaude
) -> None:
    # No shell reads .env to expand `~`: Orion does, rather than make a folder named `~`.
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / ".env").write_text("MEMORY_DIR=~/orion-memories\n")
    claude.reply("Nice to meet you, Sam.")
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": claude.url, "HOME": str(home)}

    result = run_orion_command(tmp_path, "chat", env=env, stdin="Please call me Sam.\n")

    assert result.returncode == 0, result.stderr
    memory = home / "orion-memories" / "people" / "U0TERMINAL" / "memory"
    assert f"\n  {memory}/  (" in result.stdout
    assert json.loads((memory / "preferences.json").read_text())["name"] == "Sam"
    assert not (tmp_path / "~").exists()


def test_slack_settings_left_as_examples_do_not_stop_the_chat(
    tmp_path: Path, claude: FakeClaude
) -> None:
    # A newcomer copied .env.example and filled in only the Claude key.
    (tmp_path / ".env").write_text(
        "SLACK_BOT_TOKEN=xoxb-your-bot-token\nSLACK_SIGNING_SECRET=your-signing-secret\n"
    )
    claude.reply("Hello from Claude.")

    result = _chat(tmp_path, claude, "hi\n")

    assert result.returncode == 0, result.stderr
    assert "Hello from Claude." in result.stdout


def test_the_chats_own_commands_never_reach_claude(tmp_path: Path, claude: FakeClaude) -> None:
    claude.reply("An answer.")

    result = _chat(tmp_path, claude, "/help\n/frobnicate\nA question.\n/quit\nNever read.\n")

    assert result.returncode == 0, result.stderr
    for command, what in COMMANDS.items():
        assert f"  {command} " in result.stdout and what in result.stdout
    assert "No command /frobnicate here: /help lists them." in result.stdout
    assert [message_text(m) for m in _questions(claude)[0]["messages"]] == ["A question."]
    assert len(_questions(claude)) == 1, "/quit ended the conversation"


def test_a_newcomer_is_welcomed_and_a_returning_person_greeted_with_what_orion_remembers(
    tmp_path: Path, claude: FakeClaude
) -> None:
    first = _chat(tmp_path, claude, "", "--user", USER)
    home = tmp_path / "memories" / "people" / USER
    (home / "memory").mkdir(parents=True)
    (home / "memory" / "preferences.json").write_text('{"name": "Sam", "response_style": "short"}')
    by_preferences = _chat(tmp_path, claude, "", "--user", USER)
    # The welcome prepared at the end of their last conversation wins, as in Slack.
    welcome = Welcome(
        "1712345678.000100", "Q3 budget", datetime.now(UTC), "Back to the budget, Sam?"
    )
    (home / "profile.json").write_text(profile(welcome=welcome))
    by_welcome = _chat(tmp_path, claude, "", "--user", USER)

    assert f"orion> {GENERIC_GREETING}" in first.stdout
    assert (
        "orion> Welcome back, Sam! I'll keep your preferences in mind (response style: short). "
        "How can I help today?"
    ) in by_preferences.stdout
    assert "orion> Back to the budget, Sam?" in by_welcome.stdout
    assert claude.requests == [], "a greeting costs no model call"


# --- at a terminal ---------------------------------------------------------------------


def test_a_pasted_block_of_lines_is_one_message(tmp_path: Path, claude: FakeClaude) -> None:
    claude.reply("One answer to the whole paste.")
    claude.reply("One answer to the second paste.")
    with Terminal(tmp_path, "chat", env=_env(tmp_path, claude)) as terminal:
        terminal.expect("you> ")
        terminal.type("First line of the paste.\rSecond line.\rThird line.\r")
        terminal.expect("One answer to the whole paste.")
        terminal.expect("you> ")
        # A paste without its final line break: the last line waits for Enter.
        terminal.type("Line A\rLine B")
        terminal.expect(f"{CONTINUATION}Line B")
        terminal.type("\r")
        terminal.expect("One answer to the second paste.")
        terminal.expect("you> ")
        terminal.ctrl_d()
        assert terminal.wait() == 0

    asked = [message_text(request["messages"][-1]) for request in _questions(claude)]
    assert asked == ["First line of the paste.\nSecond line.\nThird line.", "Line A\nLine B"]


def test_the_readmes_try_it_path_remembers_with_the_stand_in_claude(tmp_path: Path) -> None:
    # README "Try it": the stand-in Claude, `orion chat` twice; the second conversation
    # knows the name the first one was told.
    port = free_port()
    stand_in = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.standalone_claude", "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert stand_in.stdout is not None
    url = f"http://127.0.0.1:{port}"
    assert stand_in.stdout.readline() == f"Stand-in Claude at {url}: set ANTHROPIC_BASE_URL={url}\n"
    try:
        env = {"ANTHROPIC_API_KEY": "stand-in", "ANTHROPIC_BASE_URL": url}
        told = run_orion_command(tmp_path, "chat", env=env, stdin="Please call me Sam.\n")
        asked = run_orion_command(tmp_path, "chat", env=env, stdin="What is my name?\n")
        # The block pasted again: the second stand-in says the port is taken, in one line.
        again = subprocess.run(
            [sys.executable, "-m", "tests.fakes.standalone_claude", "--port", str(port)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert again.returncode == 1 and again.stderr.startswith(f"Port {port} is in use")
        assert "Traceback" not in again.stderr and again.stderr.count("\n") == 1
    finally:
        stand_in.terminate()
        finish(stand_in)

    assert told.returncode == asked.returncode == 0, told.stderr + asked.stderr
    assert "Saved to memory: preferences (name)" in told.stdout
    assert "orion> Welcome back, Sam!" in asked.stdout
    assert "You said: “What is my name?”" in asked.stdout and "- name: Sam" in asked.stdout


def test_ctrl_c_stops_the_answer_and_ctrl_c_at_an_empty_prompt_ends_the_chat(
    tmp_path: Path, claude: FakeClaude
) -> None:
    # The first answer streams its first words, then takes its time with the rest.
    claude.reply("Once upon a time, a very long story began.", chunk_delay=120)
    claude.reply("Sam, as you asked.")
    with Terminal(tmp_path, "chat", env=_env(tmp_path, claude)) as terminal:
        terminal.expect("you> ")
        terminal.type("Tell me a long story.\r")
        terminal.expect("Once upon")
        terminal.ctrl_c(at_prompt=False)
        stopped = terminal.expect("you> ")
        terminal.type("Please call me Sam.\r")
        terminal.expect("Sam, as you asked.")
        terminal.expect("you> ")
        terminal.type("half a thought")
        terminal.expect("half a thought")
        terminal.ctrl_c()  # with something typed: that line goes, the chat stays
        terminal.expect("you> ")
        terminal.ctrl_c()  # at an empty prompt: the end
        code = terminal.wait()
        screen = terminal.screen

    assert code == 0
    assert "(stopped)" in stopped and "a very long story" not in screen
    assert "Traceback" not in screen
    memory = tmp_path / "memories" / "people" / "U0TERMINAL" / "memory"
    assert f"Memories about U0TERMINAL are in:\n  {memory}" in screen
    # The stopped answer was forgotten: the next question came without it.
    assert [message_text(m) for m in _questions(claude)[-1]["messages"]] == ["Please call me Sam."]
    assert (tmp_path / ".orion" / "chat.log").exists()


def test_ctrl_c_stops_an_undo_that_storage_holds_up_and_the_chat_goes_on(
    tmp_path: Path,
    claude: FakeClaude,
    gcs_emulator: GcsEmulator,
    gcs_proxy: FaultyProxy,
    gcs_bucket: str,
) -> None:
    claude.reply_tool_use(
        "memory",
        {"command": "create", "path": "/memories/users/U0TERMINAL/trip.md", "file_text": "Oslo\n"},
    )
    claude.reply("Saved your trip.")
    env = _env(
        tmp_path, claude, GCS_MEMORIES_BUCKET=gcs_bucket, STORAGE_EMULATOR_HOST=gcs_proxy.url
    )
    with Terminal(tmp_path, "chat", env=env) as terminal:
        terminal.expect("you> ")
        terminal.type("Remember my trip to Oslo.\r")
        terminal.expect(UNDO_HINT)
        terminal.expect("you> ")
        held = gcs_proxy.add_rule("undo/", hold=True, method="GET")  # reading the undo record
        terminal.type("/undo\r")
        wait_until(lambda: held.hits, timeout=30, what="the undo reading its record")
        terminal.ctrl_c(at_prompt=False)
        stopped = terminal.expect("you> ")
        gcs_proxy.clear_rules()
        terminal.type("/undo\r")
        undone = terminal.expect("you> ")
        terminal.ctrl_c()
        code = terminal.wait()
        screen = terminal.screen

    assert code == 0
    assert STOPPED in stopped and "Traceback" not in screen
    assert undo.UNDONE in undone, "the chat went on, and the undo could be asked again"
    assert not any(key.endswith("/trip.md") for key in Bucket(gcs_emulator, gcs_bucket).names())


def test_a_refused_key_at_a_terminal(tmp_path: Path, claude: FakeClaude) -> None:
    claude.fail(401, "authentication_error", "invalid x-api-key")
    with Terminal(tmp_path, "chat", env=_env(tmp_path, claude)) as terminal:
        terminal.expect("you> ")
        terminal.type("hello\r")
        code = terminal.wait()
        screen = terminal.screen

    assert code == 2
    assert "orion chat stopped — ANTHROPIC_API_KEY: Claude refused it" in screen
    assert "Traceback" not in screen


def test_a_paste_longer_than_the_terminal_line_limit_arrives_whole(
    tmp_path: Path, claude: FakeClaude
) -> None:
    claude.reply("That was long.")
    with Terminal(tmp_path, "chat", env=_env(tmp_path, claude)) as terminal:
        terminal.expect("you> ")
        terminal.type(LONG_LINE + "\r")
        terminal.expect("That was long.")
        terminal.expect("you> ")
        terminal.ctrl_d()
        assert terminal.wait() == 0

    assert message_text(_questions(claude)[0]["messages"][0]) == LONG_LINE.strip()


def test_a_spinner_shows_until_the_first_words(tmp_path: Path, claude: FakeClaude) -> None:
    writing = claude.hold()  # Claude is slow to start answering
    claude.reply("Here at last.")
    with Terminal(tmp_path, "chat", env=_env(tmp_path, claude)) as terminal:
        terminal.expect("you> ")
        terminal.type("Are you there?\r")
        # The spinner shows while Claude has written nothing (held until it has shown).
        waiting = terminal.expect("thinking…")
        writing.set()
        terminal.expect("Here at last.")
        terminal.expect("you> ")
        terminal.ctrl_d()
        terminal.wait()

    assert "Here at last." not in waiting, "the spinner came before any words"


def test_sigterm_ends_the_chat_quietly(tmp_path: Path, claude: FakeClaude) -> None:
    with Terminal(tmp_path, "chat", env=_env(tmp_path, claude)) as terminal:
        terminal.expect("you> ")
        terminal.signal(signal.SIGTERM)
        code = terminal.wait()
        screen = terminal.screen

    assert code == 0
    assert "Traceback" not in screen


def test_without_readline_a_line_is_still_read_whole(tmp_path: Path) -> None:
    # Python built without readline: keys are read one by one, past the terminal's limit.
    primary, secondary = os.openpty()
    with (
        open(secondary, encoding="utf-8", closefd=True) as stdin,
        open(os.devnull, "w", encoding="utf-8") as screen,
    ):
        reader = LineReader(stdin, screen, with_readline=False)
        typist = threading.Thread(target=_type_once_read_key_by_key, args=(primary,))
        typist.start()
        line = reader.read("you> ")
        typist.join()
    os.close(primary)

    assert line == LONG_LINE  # whole, and Backspace took the "x" back


def test_without_readline_a_pasted_block_is_one_message(tmp_path: Path) -> None:
    primary, secondary = os.openpty()
    with (
        open(secondary, encoding="utf-8", closefd=True) as stdin,
        open(os.devnull, "w", encoding="utf-8") as screen,
    ):
        reader = LineReader(stdin, screen, with_readline=False)
        paste = "one\rtwo\rthree\r"
        typist = threading.Thread(target=_type_once_read_key_by_key, args=(primary, paste))
        typist.start()
        message = reader.read("you> ")
        typist.join()
    os.close(primary)

    assert message == "one\ntwo\nthree"


def _type_once_read_key_by_key(terminal: int, typed: str = LONG_LINE + "x\x7f\r") -> None:
    # Typed in canonical mode, all but the first 4,095 bytes would be dropped by the
    # terminal itself: wait until the reader has left it.
    while termios.tcgetattr(terminal)[3] & termios.ICANON:
        time.sleep(0.001)
    keys = typed.encode()
    while keys:
        keys = keys[os.write(terminal, keys) :]


def test_an_overloaded_claude_is_worded_as_such_and_the_chat_goes_on(
    tmp_path: Path, claude: FakeClaude
) -> None:
    claude.fail(529, "overloaded_error", "Overloaded")
    claude.fail(429, "rate_limit_error", "Rate limited", retry_after=0.01)
    claude.reply("Back now.")

    result = _chat(
        tmp_path, claude, "First?\nSecond?\nThird?\n", "--user", USER, ANTHROPIC_MAX_RETRIES="0"
    )

    assert result.returncode == 0, result.stderr
    overloaded, limited = result.stdout.index(OVERLOADED), result.stdout.index(BUSY)
    assert overloaded < limited < result.stdout.index("Back now.")
    # Each in the answer's place, not under an empty answer.
    assert f"{ORION}{OVERLOADED}" in result.stdout and f"{ORION}{BUSY}" in result.stdout
    assert "529" not in result.stdout and "overloaded_error" not in result.stdout


@pytest.mark.parametrize("trouble", ["no such bucket", "no credentials", "no answer"])
def test_a_bucket_that_cannot_be_used_stops_the_chat_in_one_line(
    tmp_path: Path,
    claude: FakeClaude,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
    trouble: str,
    refused_port: int,
) -> None:
    name = f"{gcs_bucket}-misspelt" if trouble == "no such bucket" else gcs_bucket
    env = {"GCS_MEMORIES_BUCKET": name, **gcs_emulator.env()}
    if trouble == "no credentials":
        del env["STORAGE_EMULATOR_HOST"]  # a laptop without application-default credentials
        env["NO_GCE_CHECK"] = "true"
    elif trouble == "no answer":
        env["STORAGE_EMULATOR_HOST"] = f"http://127.0.0.1:{refused_port}"

    result = _chat(tmp_path, claude, "Hello?\n", **env)

    code, problem = {
        "no such bucket": (2, f"no bucket gs://{name} (misspelt, or not created yet"),
        "no credentials": (2, "no Google credentials on this machine"),
        "no answer": (69, f"Cloud Storage did not answer for gs://{name}"),
    }[trouble]
    assert result.returncode == code, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"orion chat cannot start — GCS_MEMORIES_BUCKET: {problem}")
    assert "Traceback" not in result.stdout + result.stderr
    assert claude.requests == [], "nothing was asked of Claude"


def test_conversations_started_at_the_same_moment_each_have_their_own_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two terminals (or a script) starting `orion chat` in the same microsecond: each
    # conversation keeps its own object (transcript, summary), under its own id. Ten ids:
    # six random digits make a repeat among them about 1 in 20,000.
    monkeypatch.setattr(time, "time_ns", lambda: 1_795_000_000_123_456_000)
    ids = {new_thread_ts() for _ in range(10)}

    assert len(ids) == 10
    assert all(is_thread_ts(ts) and ts.startswith("1795000000.123456") for ts in ids)
    assert len({person(USER).conversation_key(ts) for ts in ids}) == 10


def test_a_conversations_id_is_never_taken_for_a_secret() -> None:
    # Records are scrubbed of secret shapes as they are stored: an id that looked like a
    # card number (thirteen digits or more after the dot, passing the Luhn check: about one
    # chat in twenty) was stored as "[redacted]", and the chat's summary was lost to it.
    for _ in range(5_000):
        ts = new_thread_ts()
        assert redact_secret_shapes(json.dumps({"thread": ts})) == json.dumps({"thread": ts})
