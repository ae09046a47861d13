"""Late events undo nothing newer (issue 44).

Slack can deliver a channel's event late, or again (a retry, a backlog after an outage).
A `channel_left` from before Orion was added back would erase what the channel said
since; a `channel_archive` from before the channel was unarchived would set an active
channel's memory aside. Each is compared, by Slack's time of it, with the time of the
last event that changed the channel: older or the same does nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from app.memory.scopes import archived_channel_prefix
from tests.e2e.channels import ADMIN, ANA, PUBLIC, mention, set_up_channels, thread_of
from tests.e2e.channels import wait_for_answer as answered
from tests.e2e.memory_bucket import Bucket
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_model import BOT_USER_ID
from tests.orion_server import OrionServer

DECISIONS = f"channels/{PUBLIC}/decisions.md"
STATE = f"channel-settings/{PUBLIC}.state.json"


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], slack: FakeSlack) -> OrionServer:
    set_up_channels(slack)
    return orion_on_bucket()


def deliver(orion: OrionServer, payload: dict[str, Any], *, retry: int | None = None) -> None:
    assert orion.post_event(payload, retry_num=retry).status_code == 200
    orion.wait_handled(payload["event_id"], deliveries=1 + (retry or 0))
    orion.wait_idle()


def remember_in_a_mention(orion: OrionServer, slack: FakeSlack, claude: FakeClaude) -> None:
    """Ana has Orion remember a decision for the channel (the memory tool, in a turn)."""
    claude.reply_tool_use(
        "memory",
        {"command": "create", "path": f"/memories/{DECISIONS}", "file_text": "- Launch: Tuesday\n"},
    )
    claude.reply("Remembered.")
    thread_ts = thread_of(mention(orion, slack, ANA, PUBLIC, "remember: launch on Tuesday"))
    answered(slack, PUBLIC, thread_ts, "Remembered.")
    orion.wait_idle()


@pytest.mark.parametrize(
    "removal",
    [
        lambda: events.channel_event("channel_left", PUBLIC, actor_id=ADMIN),
        lambda: events.member_left_channel(BOT_USER_ID, PUBLIC),
    ],
    ids=["channel_left", "member_left_channel"],
)
@pytest.mark.parametrize("late", ["redelivered", "held_up"])
def test_a_late_removal_erases_nothing_written_after_orion_was_added_back(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    removal: Callable[[], dict[str, Any]],
    late: str,
) -> None:
    removed = removal()  # an admin removes Orion: Slack's event of it, with its time
    if late == "redelivered":
        deliver(orion, removed)  # handled then: the channel's memory is erased
    # The admin adds Orion back, and Ana has it remember something.
    deliver(orion, events.member_joined_channel(BOT_USER_ID, PUBLIC))
    remember_in_a_mention(orion, slack, claude)
    assert bucket.read(DECISIONS) == "- Launch: Tuesday\n"

    deliver(orion, removed, retry=1 if late == "redelivered" else None)

    assert bucket.read(DECISIONS) == "- Launch: Tuesday\n", "what was said since stays"
    assert orion.logged("slack.channel.lifecycle_stale")
    state = json.loads(bucket.read(STATE) or "{}")
    assert state["event"] == "member_joined_channel"


@pytest.mark.parametrize("late", ["redelivered", "held_up"])
def test_a_late_archive_does_not_set_an_active_channels_memory_aside(
    orion: OrionServer, slack: FakeSlack, bucket: Bucket, late: str
) -> None:
    bucket.write(DECISIONS, "- Launch: Tuesday\n")
    archived = events.channel_event("channel_archive", PUBLIC, user=ADMIN)
    unarchived = events.channel_event("channel_unarchive", PUBLIC, user=ADMIN)
    if late == "redelivered":
        deliver(orion, archived)
        assert bucket.read(DECISIONS) is None, "set aside while archived"
    deliver(orion, unarchived)
    assert bucket.read(DECISIONS) == "- Launch: Tuesday\n"

    deliver(orion, archived, retry=1 if late == "redelivered" else None)

    assert bucket.read(DECISIONS) == "- Launch: Tuesday\n", "the active channel keeps it"
    assert not [n for n in bucket.names() if n.startswith(archived_channel_prefix(PUBLIC))]


def test_a_late_unarchive_brings_nothing_back_into_an_archived_channel(
    orion: OrionServer, slack: FakeSlack, bucket: Bucket
) -> None:
    bucket.write(DECISIONS, "- Launch: Tuesday\n")
    first_archive = events.channel_event("channel_archive", PUBLIC, user=ADMIN)
    unarchived = events.channel_event("channel_unarchive", PUBLIC, user=ADMIN)
    archived_again = events.channel_event("channel_archive", PUBLIC, user=ADMIN)
    for payload in (first_archive, unarchived, archived_again):
        deliver(orion, payload)
    aside = f"{archived_channel_prefix(PUBLIC)}decisions.md"
    assert bucket.read(aside) == "- Launch: Tuesday\n"

    deliver(orion, unarchived, retry=1)

    assert bucket.read(DECISIONS) is None and bucket.read(aside) == "- Launch: Tuesday\n"


def test_a_removal_newer_than_the_channels_state_still_erases(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    deliver(orion, events.member_joined_channel(BOT_USER_ID, PUBLIC))
    remember_in_a_mention(orion, slack, claude)

    deliver(orion, events.channel_event("channel_left", PUBLIC, actor_id=ADMIN))

    assert bucket.read(DECISIONS) is None
    assert not orion.logged("slack.channel.lifecycle_stale")
