"""`orion memory show|export|forget USER_ID`, run as the real command an operator types."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.memory.scopes import session_context_key, thread_context_key
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import run_orion_command

USER, OTHER = "U0MEMCLI", "U0KEEPME"
DM = "D0MEMCLI"
THREAD = "1712345678.123456"
PREFERENCES = '{"language": "French", "name": "Sam"}'
NOTE = "Q3 budget: travel is over by 12%.\n"
SUMMARY = f"# Q3 budget\n\nUser: {USER}\n\nWe compared travel costs.\n"
INDEX = f'[{{"thread": "{THREAD}", "title": "Q3 budget", "updated": "2026-11-02T09:30:00Z"}}]'


@pytest.fixture
def memories(tmp_path: Path) -> Path:
    root = tmp_path / "memories"
    files = {
        f"users/{USER}/preferences.json": PREFERENCES,
        f"users/{USER}/notes/budget.md": NOTE,
        f"people/{USER}/conversations.json": INDEX,
        session_context_key(THREAD): SUMMARY,
        thread_context_key(DM, THREAD): '{"memory": "language: French"}',
        f"users/{OTHER}/preferences.json": '{"language": "German"}',
    }
    for key, content in files.items():
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        (root / key).write_text(content)
    return root


@pytest.fixture
def slack_with_dm() -> Iterator[FakeSlack]:
    with FakeSlack() as slack:
        slack.set_dm_channel(USER, DM)
        yield slack


def _orion(tmp_path: Path, memories: Path, slack: FakeSlack, *args: str, stdin: str = ""):
    env = {
        "SLACK_BOT_TOKEN": "xoxb-cli-test",
        "SLACK_API_URL": slack.url,
        "ANTHROPIC_API_KEY": "sk-ant-cli-test",
        "MEMORY_DIR": str(memories),
        "LOG_FORMAT": "json",
    }
    return run_orion_command(tmp_path, "memory", *args, env=env, stdin=stdin)


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}


def test_show_and_export_print_what_orion_keeps(
    tmp_path: Path, memories: Path, slack_with_dm: FakeSlack
) -> None:
    shown = _orion(tmp_path, memories, slack_with_dm, "show", USER)
    assert shown.returncode == 0, shown.stderr
    for expected in ("language: French", "name: Sam", "notes/budget.md", "Q3 budget"):
        assert expected in shown.stdout
    assert "German" not in shown.stdout

    out = tmp_path / "export.md"
    exported = _orion(tmp_path, memories, slack_with_dm, "export", USER, "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    document = out.read_text()
    assert NOTE.strip() in document and "We compared travel costs." in document


def test_forget_asks_first_then_removes_everything_of_the_person_only(
    tmp_path: Path, memories: Path, slack_with_dm: FakeSlack
) -> None:
    refused = _orion(tmp_path, memories, slack_with_dm, "forget", USER, stdin="no\n")
    assert refused.returncode == 1 and "nothing was deleted" in refused.stdout
    assert f"users/{USER}/preferences.json" in _files(memories)

    done = _orion(tmp_path, memories, slack_with_dm, "forget", USER, stdin=f"{USER}\n")
    assert done.returncode == 0, done.stderr
    assert "Deleted 5 objects" in done.stdout
    left = _files(memories)
    assert not [k for k, v in left.items() if USER in k or USER in v or "French" in v]
    assert left[f"users/{OTHER}/preferences.json"] == '{"language": "German"}'
    assert slack_with_dm.calls_to("conversations.open"), "the DM was looked up in Slack"
    assert "French" not in done.stderr and "Q3" not in done.stderr, "logs carry counts only"


def test_a_bad_user_id_is_refused_clearly(
    tmp_path: Path, memories: Path, slack_with_dm: FakeSlack
) -> None:
    result = _orion(tmp_path, memories, slack_with_dm, "forget", "../etc", "--yes")
    assert result.returncode == 2 and "Not a Slack user id" in result.stderr
    assert "Traceback" not in result.stderr
