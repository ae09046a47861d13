"""The Undo under a memory note can only ever undo its own person's answer.

Played end to end (the real Orion HTTP app, the fake Slack and Claude, memories in the GCS
emulator): another person clicking someone's Undo, a forged button value (another record's
id guessed, a path, a key of someone's memory, junk), a forged click for a record that
belongs to someone else. A click's record is looked for only in the home of the person
Slack's signed payload names, so someone else's record is never found, read or changed.
Each ends by reading the bucket: nothing changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from app.learning import undo
from app.memory.homes import person, preferences_key
from app.slack.conversation.memory_note_blocks import NOTE_BLOCK_ID, UNDO_ACTION_ID
from tests import log_events
from tests.e2e import conversation
from tests.e2e.memory_bucket import Bucket
from tests.e2e.memory_notes import (
    answer_summaries,
    click_undo,
    notes,
    undo_value,
    wait_for_ephemeral,
    wait_for_note,
)
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

OWNER, OWNER_DM = "U0OWNER1", "D0OWNER1"
MALLORY = "U0MALLORY"
MEMORIES = f"/memories/users/{OWNER}"


@pytest.fixture
def orion(
    orion_on_bucket: Callable[..., OrionServer], bucket: Bucket, claude: FakeClaude
) -> OrionServer:
    bucket.write(preferences_key(OWNER), json.dumps({"name": "Owen"}))
    bucket.write(preferences_key(MALLORY), json.dumps({"name": "Mallory"}))
    server = orion_on_bucket()
    answer_summaries(claude, server.settings.summary_model)
    return server


def _noted_turn(orion: OrionServer, slack: FakeSlack, claude: FakeClaude) -> tuple[str, Any]:
    """The owner's answer saves a note; returns the thread and the memory note."""
    thread_ts = slack.new_ts()
    claude.reply_tool_use(
        "memory",
        {"command": "create", "path": f"{MEMORIES}/plans.md", "file_text": "Ship on Friday.\n"},
    )
    claude.reply("Saved your plan.")
    conversation.post_user_message(orion, slack, OWNER, OWNER_DM, thread_ts, "Note my plan.")
    conversation.wait_for_answer(slack, OWNER_DM, thread_ts, "Saved your plan.")
    return thread_ts, wait_for_note(slack, OWNER_DM, thread_ts)


def _everything(bucket: Bucket) -> dict[str, str]:
    return {key: bucket.read(key) or "" for key in bucket.names()}


def test_another_persons_click_finds_nothing_of_theirs_and_changes_nothing(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    thread_ts, note = _noted_turn(orion, slack, claude)
    before, generations = _everything(bucket), bucket.generations()

    click_undo(orion, slack, MALLORY, OWNER_DM, note)

    # Her own home holds no such record: there is nothing of hers to undo.
    assert wait_for_ephemeral(slack, MALLORY) == undo.EXPIRED
    [line] = orion.wait_logged(log_events.MEMORY_UNDO)
    assert line["user"] == MALLORY and line["outcome"] == "gone"
    assert _everything(bucket) == before and bucket.generations() == generations
    assert not notes(slack, OWNER_DM, thread_ts)[0].edited, "the owner's Undo still stands"
    # The owner's own click still works afterwards.
    click_undo(orion, slack, OWNER, OWNER_DM, note)
    slack.wait_for(lambda: notes(slack, OWNER_DM, thread_ts)[0].edited, what="undone")
    assert bucket.read(f"{person(OWNER).memory_prefix}plans.md") is None


@pytest.mark.parametrize(
    "value",
    [
        "0" * 32,  # a well-formed id of no record
        f"../{person(OWNER).memory_prefix}plans.md",
        f"{person(OWNER).memory_prefix}plans",
        f"{person(OWNER).prefix}undo/x",
        "A" * 2000,
        "",
    ],
    ids=["unknown-id", "traversal", "memory-key", "record-prefix", "huge", "empty"],
)
def test_a_forged_button_value_reaches_nothing(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket, value: str
) -> None:
    _, note = _noted_turn(orion, slack, claude)
    before, generations = _everything(bucket), bucket.generations()

    payload = events.block_actions(
        OWNER,
        OWNER_DM,
        note.ts,
        UNDO_ACTION_ID,
        value,
        thread_ts=note.thread_ts,
        block_id=NOTE_BLOCK_ID,
    )
    assert orion.post_form(events.form_body(payload)).status_code == 200

    assert wait_for_ephemeral(slack, OWNER) == undo.EXPIRED
    assert _everything(bucket) == before and bucket.generations() == generations


def test_mallorys_own_forged_click_with_the_owners_id_undoes_nothing_of_the_owner(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    """Mallory crafts a click on her own DM, naming the owner's record: whose click it is
    comes from Slack's signed `user`, and only that person's home is looked in."""
    _, note = _noted_turn(orion, slack, claude)
    before = _everything(bucket)

    payload = events.block_actions(
        MALLORY, "D0MALLORY", note.ts, UNDO_ACTION_ID, undo_value(note), block_id=NOTE_BLOCK_ID
    )
    assert orion.post_form(events.form_body(payload)).status_code == 200

    assert wait_for_ephemeral(slack, MALLORY) == undo.EXPIRED
    assert _everything(bucket) == before
    assert not [c for c in slack.calls_to("chat.update") if c.args.get("ts") == note.ts]


def test_an_unsigned_click_is_refused_before_anything_is_read(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    _, note = _noted_turn(orion, slack, claude)
    before = _everything(bucket)
    payload = events.block_actions(
        OWNER, OWNER_DM, note.ts, UNDO_ACTION_ID, undo_value(note), block_id=NOTE_BLOCK_ID
    )

    response = orion.post_form(events.form_body(payload), secret="not-the-signing-secret")

    assert response.status_code == 401
    assert _everything(bucket) == before


def test_with_memory_switched_off_a_click_is_told_memory_is_unavailable_not_expired(
    orion_on_bucket: Callable[..., OrionServer], slack: FakeSlack, bucket: Bucket
) -> None:
    """An old note's Undo, clicked once the operator switched memory off: nothing is read
    or changed, and the person is not told their record expired (it may be there)."""
    orion = orion_on_bucket(memory_enabled=False)
    before = _everything(bucket)
    payload = events.block_actions(
        OWNER,
        OWNER_DM,
        slack.new_ts(),
        UNDO_ACTION_ID,
        "3f9c2a7b5e1d4c8a9b0f6e2d1c3a5b7e",
        block_id=NOTE_BLOCK_ID,
    )
    assert orion.post_form(events.form_body(payload)).status_code == 200

    assert wait_for_ephemeral(slack, OWNER) == undo.UNAVAILABLE
    assert _everything(bucket) == before
