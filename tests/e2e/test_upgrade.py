"""An upgrade over memory that Orion wrote up to 2026-11-28 (tests/data/legacy_2026_11_28/,
made by running that code): the new Orion moves it into its owners' homes as it starts, and
its people are served as before — greeted by name, their memory handed to Claude, their
old conversations recalled, their notes on the Home tab — and Forget everything leaves
nothing of them, old or new."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.slack.home import controls
from app.slack.home.memory_view import ACTION_FORGET_EVERYTHING
from tests.e2e import conversation
from tests.e2e.conversation import open_thread
from tests.e2e.home import click, open_home, shown
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings

DATA = Path(__file__).resolve().parents[1] / "data" / "legacy_2026_11_28"
EXPECTED = json.loads((DATA / "expected.json").read_text())["stores"]["store"]
SAM = EXPECTED["people"][0]
ROBIN = EXPECTED["people"][1]
OLD_PREFIXES = (
    "users",
    "sessions",
    "threads",
    "conversations",
    "undo",
    "settings",
    "channel-records",
    "channel-settings",
    "erasures",
)


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    target = tmp_path / "memories"
    shutil.copytree(DATA / "store", target)
    return target


@pytest.fixture
def orion(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Iterator[OrionServer]:
    # Everything was written on 2026-11-28: the longest window keeps it within retention.
    settings = make_settings(
        slack, claude, memory_dir=memory_dir, memory_session_retention_days=3650
    )
    with OrionServer(settings) as server:
        server.wait_logged("memory.upgrade", timeout=30)
        yield server


def keys(memory_dir: Path) -> list[str]:
    return sorted(str(p.relative_to(memory_dir)) for p in memory_dir.rglob("*") if p.is_file())


def ask(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, person: dict[str, Any], text: str
) -> dict[str, Any]:
    """`person` opens a thread and asks; returns the first request Claude was sent."""
    thread_ts, _ = open_thread(orion, slack, person["user"], person["dm"])
    before = len(conversation.main_requests(claude, orion))
    conversation.post_user_message(orion, slack, person["user"], person["dm"], thread_ts, text)
    conversation.wait_for_messages(slack, person["dm"], thread_ts, 1, after_greeting=True)
    return conversation.main_requests(claude, orion)[before]


def recalled(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, person: dict[str, Any], query: str
) -> str:
    claude.reply_tool_use("recall", {"query": query})
    claude.reply("Here is what I found.")
    thread_ts, _ = open_thread(orion, slack, person["user"], person["dm"])
    before = len(conversation.main_requests(claude, orion))
    conversation.post_user_message(
        orion, slack, person["user"], person["dm"], thread_ts, f"What did I say about {query}?"
    )
    conversation.wait_for_messages(slack, person["dm"], thread_ts, 1, after_greeting=True)
    [_, answered] = conversation.main_requests(claude, orion)[before : before + 2]
    [result] = conversation.tool_results(answered)
    return conversation.result_text(result)


def test_the_old_layout_is_moved_home_as_orion_starts(orion: OrionServer, memory_dir: Path) -> None:
    [upgraded] = orion.logged("memory.upgrade")
    assert upgraded["moved_people"] == 3 and upgraded["moved_channels"] == 1
    assert upgraded["unreadable"] == 0
    left = [k for k in keys(memory_dir) if k.split("/")[0] in OLD_PREFIXES]
    assert left == []
    sam = f"people/{SAM['user']}"
    assert {f"{sam}/profile.json", f"{sam}/memory/preferences.json"} <= set(keys(memory_dir))
    assert f"{sam}/memory/notes/travel.md" in keys(memory_dir)


def test_a_returning_person_is_greeted_by_name_and_their_memory_reaches_claude(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    _, greeting = open_thread(orion, slack, SAM["user"], SAM["dm"])
    assert greeting == SAM["greeting"]
    claude.reply("Sure.")
    request = ask(orion, slack, claude, SAM, "What should I focus on this week?")
    memory = conversation.remembered(request)
    for line in SAM["remembered_lines"]:
        assert line in memory


def test_old_conversations_are_recalled_by_what_was_said_in_passing(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    for old in SAM["conversations"]:
        found = recalled(orion, slack, claude, SAM, old["query"])
        assert old["detail"] in found and old["thread_ts"] in found


def test_what_a_person_had_forgotten_before_the_upgrade_stays_forgotten(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    [gone] = ROBIN["forgotten_conversations"]
    everything = "\n".join(p.read_text() for p in memory_dir.rglob("*") if p.is_file())
    for word in gone["words_gone_everywhere"]:
        assert word not in everything
    found = recalled(orion, slack, claude, ROBIN, gone["query"])
    assert found.startswith("No earlier conversation") and gone["title"] not in found


def test_the_home_tab_shows_the_old_notes_and_forget_everything_leaves_nothing(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    view = open_home(orion, slack, SAM["user"], SAM["dm"])
    assert "notes/travel.md" in shown(view)
    assert "Q3 budget plan" in shown(view) and "Lisbon trip planning" in shown(view)

    after = click(orion, slack, SAM["user"], view, ACTION_FORGET_EVERYTHING)

    assert controls.FORGOT_EVERYTHING in shown(after)
    theirs = [k for k in keys(memory_dir) if SAM["user"] in k]
    assert theirs == [f"people/{SAM['user']}/profile.json"]  # the erasure's mark, no more
    profile = json.loads((memory_dir / theirs[0]).read_text())
    assert set(profile) == {"version", "erased_at"}
    everything = "\n".join(p.read_text() for p in memory_dir.rglob("*") if p.is_file())
    for old in SAM["conversations"]:
        assert old["detail"] not in everything


def test_a_start_marks_the_bucket_as_the_new_layouts_before_it_serves(
    slack: FakeSlack, claude: FakeClaude, tmp_path: Path
) -> None:
    # What tells a rollback's old objects from the homes this Orion keeps
    # (tests/security/test_upgrade_keeps_erasures.py): there before the first event.
    settings = make_settings(slack, claude, memory_dir=tmp_path)
    marker = tmp_path / "deployment" / "layout.json"
    with OrionServer(settings, started_as_deployed=True):
        assert json.loads(marker.read_text())["layout"] == "homes"
        first = marker.stat().st_mtime_ns
    with OrionServer(settings, started_as_deployed=True):
        assert marker.stat().st_mtime_ns == first, "the first mark is kept"
    assert keys(tmp_path) == ["deployment/layout.json"]
