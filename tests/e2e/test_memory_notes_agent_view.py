"""The memory note and its Undo in Slack's Agent messaging experience (agent_view), and
what a Stop leaves it to say.

The same Orion as tests/e2e/test_memory_notes.py, with `SLACK_EXPERIENCE=agent`, against a
fake Slack behaving as for an agent_view app: a conversation is the person's own
top-level DM and its thread, and the Stop button arrives as `agent_session_stopped`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from app.memory.homes import person
from app.slack.agent_view import STOPPED_CONFIRMATION
from tests.e2e import conversation
from tests.e2e.memory_bucket import Bucket
from tests.e2e.memory_notes import (
    answer_summaries,
    click_undo,
    note_lines,
    notes,
    wait_for_note,
)
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, DM = "U0AGNES", "D0AGNES"
OWN = person(USER).memory_prefix
MEMORIES = f"/memories/users/{USER}"


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(agent_view=True) as fake:
        yield fake


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], claude: FakeClaude) -> OrionServer:
    server = orion_on_bucket(slack_experience="agent")
    answer_summaries(claude, server.settings.summary_model)
    return server


def start_conversation(orion: OrionServer, slack: FakeSlack, text: str) -> str:
    """The person writes a top-level DM; returns the conversation's thread."""
    ts = slack.add_user_message(DM, None, USER, text)
    assert orion.post_event(events.top_level_dm(USER, DM, text, ts=ts)).status_code == 200
    return ts


def memory_of(bucket: Bucket) -> dict[str, str]:
    return {key: bucket.read(key) or "" for key in bucket.names() if key.startswith(OWN)}


def test_in_agent_view_the_note_follows_the_answer_and_undo_restores(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    claude.reply_tool_use(
        "memory",
        {"command": "create", "path": f"{MEMORIES}/garden.md", "file_text": "Tomatoes.\n"},
    )
    claude.reply("I'll remember the tomatoes.")
    thread_ts = start_conversation(orion, slack, "Remember I grow tomatoes.")

    note = wait_for_note(slack, DM, thread_ts)
    answer, shown = slack.bot_messages(DM, thread_ts)
    assert answer.text == "I'll remember the tomatoes." and shown.ts == note.ts
    assert note_lines(note) == ["Saved to memory: garden.md"]
    assert bucket.read(f"{OWN}garden.md") == "Tomatoes.\n"

    click_undo(orion, slack, USER, DM, note)
    slack.wait_for(lambda: notes(slack, DM, thread_ts)[0].edited, what="the note, undone")
    assert memory_of(bucket) == {}


def test_after_a_stop_the_note_claims_only_the_writes_that_finished(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    gcs_proxy: FaultyProxy,
) -> None:
    bucket.write(f"{OWN}done.md", "Finished before the Stop.\n")
    bucket.write(f"{OWN}pending.md", "Its deletion is under way when the Stop comes.\n")
    # The second deletion reaches the bucket only long after the person pressed Stop.
    gcs_proxy.add_rule("pending.md", delay=5, method="DELETE")
    claude.reply_tool_use("memory", {"command": "delete", "path": f"{MEMORIES}/done.md"})
    claude.reply_tool_use("memory", {"command": "delete", "path": f"{MEMORIES}/pending.md"})
    claude.reply("Both gone.")
    thread_ts = start_conversation(orion, slack, "Delete both notes.")
    slack.wait_for(lambda: bucket.read(f"{OWN}done.md") is None, what="the first deletion")
    claude.wait_for(
        lambda: len(conversation.main_requests(claude, orion)) >= 2,
        what="Claude asking for the second deletion",
    )

    stop = events.agent_session_stopped(USER, DM, thread_ts)
    assert orion.post_event(stop).status_code == 200

    note = wait_for_note(slack, DM, thread_ts)
    assert note_lines(note) == ["Deleted: done.md"], "nothing claimed for the cut-off write"
    texts = [m.text for m in slack.bot_messages(DM, thread_ts)]
    assert STOPPED_CONFIRMATION in texts and "Both gone." not in texts
