"""What Orion keeps, end to end: no secret lands in the store, and conversations older
than the retention window are neither restored at thread start nor kept on disk.

Through signed events: Orion over HTTP, the fake Slack and Claude, memories in the GCS
emulator (secrets) or a local directory (retention: a file's age is its modification time,
which the tests set back as days passing would; a bucket's lifecycle rule is covered in
tests/test_memory_hygiene.py).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from app.memory.homes import person, preferences_key
from tests import layout, log_events
from tests.e2e import conversation
from tests.e2e.conversation import main_requests, result_text, tool_results
from tests.e2e.memory_bucket import Bucket
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.claude_script import text
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings

USER, CHANNEL = "U0HYGIENE", "D0HYGIENE"
SLACK_TOKEN = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
NOTES = f"/memories/users/{USER}/deploy.md"

OLD_SUMMARY = "We chose Postgres for the billing service (40 days ago)."
RECENT_SUMMARY = "We planned the Q3 offsite in Lisbon (10 days ago)."
PREFERENCES = {"timezone": "Europe/Berlin"}
ANSWER = "Noted in your deploy notes. Better still: keep tokens in a secret manager, not here."


def set_age(path: Path, days: float) -> None:
    then = (datetime.now(UTC) - timedelta(days=days)).timestamp()
    os.utime(path, (then, then))


def seed(directory: Path, key: str, content: str, *, days_old: float) -> Path:
    path = directory / key
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    set_age(path, days_old)
    return path


def past(thread_ts: str, days_old: float) -> str:
    """The person's conversation in `thread_ts`, summarised `days_old` days ago."""
    summary = OLD_SUMMARY if days_old > 30 else RECENT_SUMMARY
    at = datetime.now(UTC) - timedelta(days=days_old)
    return layout.conversation(
        USER,
        thread_ts,
        channel_id=CHANNEL,
        summary=summary,
        messages=[("user", "Hi"), ("assistant", "Hello!")],
        at=at,
    )


@pytest.fixture
def orion_local(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Iterator[OrionServer]:
    with OrionServer(make_settings(slack, claude, memory_dir=memory_dir)) as server:
        yield server


# --- secrets --------------------------------------------------------------------------------


def test_a_slack_token_said_in_a_thread_is_kept_nowhere(
    slack: FakeSlack, claude: FakeClaude, gcs_bucket: str, bucket: Bucket
) -> None:
    settings = make_settings(slack, claude, gcs_memories_bucket=gcs_bucket)
    with OrionServer(settings) as orion:
        thread_ts = slack.new_ts()
        note = f"Deploy bot token: {SLACK_TOKEN}\nRotate monthly.\n"
        claude.reply_tool_use("memory", {"command": "create", "path": NOTES, "file_text": note})
        claude.reply(ANSWER)
        summary_model = orion.settings.summary_model

        def summarise(body: dict[str, Any]) -> Any:
            if body["model"] != summary_model:
                return None
            return text(f"# Rotating {SLACK_TOKEN}\nThe person shared {SLACK_TOKEN}.")

        claude.responder = summarise
        question = f"Remember our deploy bot token {SLACK_TOKEN}; we rotate it every month."
        conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, question)
        conversation.wait_for_answer(slack, CHANNEL, thread_ts, ANSWER)
        # The summary the turn end made: with the welcome back, until the next turn.
        profile = bucket.wait_for(person(USER).profile_key, lambda c: "[redacted]" in c)

        # The model's tool result reads exactly as the SDK's reference tool's would.
        results = [result_text(r) for r in tool_results(main_requests(claude, orion)[1])]
        assert results == [f"File created successfully at: {NOTES}"]

    note = bucket.read(f"{person(USER).memory_prefix}deploy.md")
    assert note == "Deploy bot token: [redacted]\nRotate monthly.\n"
    welcome = layout.welcome_in(profile)
    assert welcome is not None and welcome.topic == "Rotating [redacted]"
    assert layout.summary_of_latest(profile) == "The person shared [redacted]."
    everything = {name: bucket.read(name) or "" for name in bucket.names()}
    assert everything, "nothing was written"
    assert [name for name, content in everything.items() if SLACK_TOKEN in content] == []


# --- retention ------------------------------------------------------------------------------


def test_the_local_directory_is_swept_at_start_up(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    old_thread, recent_thread = "1700000000.000001", "1700000000.000002"
    home = person(USER)
    old = [
        seed(memory_dir, home.conversation_key(old_thread), past(old_thread, 40), days_old=40),
        seed(memory_dir, f"{home.notes_prefix(old_thread)}todo.md", "Pick a DB.", days_old=40),
        seed(memory_dir, home.profile_key, layout.profile(), days_old=400),
    ]
    kept = [
        seed(
            memory_dir, home.conversation_key(recent_thread), past(recent_thread, 10), days_old=10
        ),
        seed(memory_dir, f"{home.notes_prefix(recent_thread)}todo.md", "Book.", days_old=10),
        seed(memory_dir, preferences_key(USER), json.dumps(PREFERENCES), days_old=400),
        seed(memory_dir, f"{home.memory_prefix}notes.md", "Works on billing.", days_old=400),
    ]

    with OrionServer(make_settings(slack, claude, memory_dir=memory_dir)) as orion:
        [sweep] = orion.wait_logged(log_events.MEMORY_RETENTION_SWEEP)

    assert sweep["deleted"] == 3 and sweep["retention_days"] == 30
    assert [path for path in old if path.exists()] == []
    assert [path for path in kept if not path.exists()] == []


def test_a_40_day_old_summary_is_not_restored_for_its_thread(
    orion_local: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    orion_local.wait_logged(log_events.MEMORY_RETENTION_SWEEP)  # seeded after it: only reads decide
    seed(memory_dir, preferences_key(USER), json.dumps(PREFERENCES), days_old=400)
    old_thread, recent_thread = (
        slack.open_assistant_thread(CHANNEL),
        slack.open_assistant_thread(CHANNEL),
    )
    home = person(USER)
    seed(memory_dir, home.conversation_key(old_thread), past(old_thread, 40), days_old=40)
    seed(memory_dir, home.conversation_key(recent_thread), past(recent_thread, 10), days_old=10)

    # A message in each thread, with no thread start seen for it: the turn restores the
    # thread's memory itself, its summary included (a thread start does not ask for one:
    # a thread Slack has just opened has none).
    requests = {}
    for thread_ts, answer in ((old_thread, "Let's start afresh."), (recent_thread, "Lisbon.")):
        claude.reply(answer)
        question = f"Where did we land last time? ({thread_ts})"
        conversation.post_user_message(orion_local, slack, USER, CHANNEL, thread_ts, question)
        conversation.wait_for_answer(slack, CHANNEL, thread_ts, answer)
        [requests[thread_ts]] = [
            r for r in main_requests(claude, orion_local) if last_user_text(r) == question
        ]

    assert OLD_SUMMARY not in json.dumps(requests[old_thread])
    assert "Europe/Berlin" in json.dumps(requests[old_thread])
    assert RECENT_SUMMARY in json.dumps(requests[recent_thread])
