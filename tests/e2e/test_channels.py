"""Orion in channels, end to end: a mention answered in its thread as a teammate, the
channel's conversation and memory in the bucket, once per mention, and nothing at all in
a channel Orion was removed from."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from app.agent.memory_task import CHANNEL_RESTORE_TITLE
from app.learning.conversation_record import ConversationRecord
from app.memory.homes import channel, person
from tests import layout, log_events
from tests.e2e.channels import (
    ANA,
    BEN,
    PUBLIC,
    answers,
    mention,
    say,
    set_up_channels,
    thread_of,
    wait_for_answer,
)
from tests.e2e.conversation import main_requests, system_text
from tests.e2e.memory_bucket import Bucket
from tests.fakes._waiting import wait_until
from tests.fakes.anthropic_api import FakeClaude, message_text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_model import TEAM_ID
from tests.orion_server import OrionServer

DECISIONS = f"/memories/channels/{PUBLIC}/decisions.md"


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], slack: FakeSlack) -> OrionServer:
    set_up_channels(slack)
    return orion_on_bucket()


def record_of(bucket: Bucket, thread_ts: str) -> ConversationRecord:
    record = ConversationRecord.parse(bucket.read(channel(PUBLIC).conversation_key(thread_ts)))
    assert record is not None
    return record


def spoke_in(bucket: Bucket, user: str, thread_ts: str) -> None:
    """Wait until `user`'s home notes the channel thread as one holding their words."""
    noted = person(user).channel_thread_key(PUBLIC, thread_ts)  # an empty object
    wait_until(lambda: noted in bucket.names(), what=f"{noted} in the bucket")


def test_a_mention_is_answered_in_its_thread_streamed_to_the_channel(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    claude.reply("The launch is on Tuesday.")
    payload = mention(orion, slack, ANA, PUBLIC, "when is the launch?")
    thread_ts = thread_of(payload)

    wait_for_answer(slack, PUBLIC, thread_ts, "The launch is on Tuesday.")
    [start] = [c for c in slack.calls_to("chat.startStream") if not c.error]
    # Slack requires the recipient outside a DM: the person who mentioned Orion.
    assert (start.args["thread_ts"], start.args["recipient_user_id"]) == (thread_ts, ANA)
    assert start.args["recipient_team_id"] == TEAM_ID
    [answer] = slack.bot_messages(PUBLIC, thread_ts)
    assert any(b.get("type") == "context_actions" for b in answer.blocks)  # feedback
    # No status line in a channel (assistant threads only): the stream's tasks show the work.
    assert slack.calls_to("assistant.threads.setStatus") == []
    [restore] = slack.tasks(PUBLIC, thread_ts)
    assert (restore.title, restore.status) == (CHANNEL_RESTORE_TITLE, "complete")
    assert "thread of a Slack channel" in system_text(main_requests(claude, orion)[0])

    orion.wait_idle()
    record = record_of(bucket, thread_ts)
    assert (record.owner.kind, record.owner.channel, record.owner.user) == ("channel", PUBLIC, ANA)
    assert [(m.role, m.user) for m in record.messages] == [("user", ANA), ("assistant", None)]
    spoke_in(bucket, ANA, thread_ts)


def test_what_members_said_without_mentioning_orion_is_read_and_kept_with_its_author(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    claude.reply("Noted.")
    first = mention(orion, slack, ANA, PUBLIC, "we're planning the launch")
    thread_ts = thread_of(first)
    wait_for_answer(slack, PUBLIC, thread_ts, "Noted.")
    orion.wait_idle()
    say(slack, BEN, PUBLIC, thread_ts, "I think Tuesday works for the billing team")
    say(slack, ANA, PUBLIC, thread_ts, "Tuesday it is then")

    claude.reply("Tuesday, as Ana and Ben agreed.")
    mention(orion, slack, BEN, PUBLIC, "so what did we settle?", thread_ts=thread_ts)
    wait_for_answer(slack, PUBLIC, thread_ts, "Tuesday, as Ana and Ben agreed.")

    messages = main_requests(claude, orion)[-1]["messages"]
    said = message_text(messages[-1])
    # Each message: who wrote it (Slack's word), then the message, quoted.
    assert f"<@{BEN}> wrote:\n> I think Tuesday works" in said
    assert f"<@{ANA}> wrote:\n> Tuesday it is then" in said
    assert said.endswith(f"<@{BEN}> wrote:\n> <@UBOT> so what did we settle?")
    # Only what was said since the transcript's newest message was asked of Slack.
    reads = [c for c in slack.calls_to("conversations.replies") if not c.error]
    assert reads and reads[-1].args.get("oldest")

    orion.wait_idle()
    record = record_of(bucket, thread_ts)
    assert [(m.role, m.user) for m in record.messages] == [
        ("user", ANA),
        ("assistant", None),
        ("user", BEN),
        ("user", ANA),
        ("user", BEN),
        ("assistant", None),
    ]
    spoke_in(bucket, BEN, thread_ts)
    spoke_in(bucket, ANA, thread_ts)


def test_what_the_channel_asks_orion_to_remember_is_the_channels_and_says_who(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    claude.reply_tool_use(
        "memory",
        {"command": "create", "path": DECISIONS, "file_text": "- Launch: Tuesday (Ana)\n"},
    )
    claude.reply("Remembered for the channel.")
    thread_ts = thread_of(
        mention(
            orion,
            slack,
            ANA,
            PUBLIC,
            "please remember for the whole channel that we decided to launch the new "
            "billing page on Tuesday, after the review with the payments team",
        )
    )
    wait_for_answer(slack, PUBLIC, thread_ts, "Remembered for the channel.")

    home = channel(PUBLIC)
    assert bucket.read(f"{home.memory_prefix}decisions.md") == "- Launch: Tuesday (Ana)\n"
    profile = bucket.wait_for(home.profile_key, lambda content: "changes" in json.loads(content))
    changes = json.loads(profile)["changes"]
    assert [(c["by"], c["action"], c["what"]) for c in changes] == [(ANA, "write", DECISIONS)]
    audit = [
        line
        for line in orion.logged(log_events.AUDIT_MEMORY)
        if line["action"] == "write" and line.get("what") == DECISIONS
    ]
    assert [(a["scope"], a["actor"]) for a in audit] == [(f"channel:{PUBLIC}", ANA)]
    orion.wait_idle()
    # The thread's summary is the channel's, not anyone's.
    latest = layout.welcome_in(bucket.read(home.profile_key))
    assert latest is not None and latest.thread_ts == thread_ts and latest.summary is not None
    anas = [n for n in bucket.names() if n.startswith(person(ANA).prefix)]
    assert anas == [person(ANA).channel_thread_key(PUBLIC, thread_ts)], "only where she spoke"


def test_a_retried_mention_is_answered_once(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    claude.reply("Only once.")
    payload = mention(orion, slack, ANA, PUBLIC, "hello")
    for retry in (1, 2):
        assert orion.post_event(payload, retry_num=retry).status_code == 200
    orion.wait_handled(payload["event_id"], deliveries=3)
    orion.wait_idle()
    assert answers(slack, PUBLIC, thread_of(payload)) == ["Only once."]
    assert len(main_requests(claude, orion)) == 1


def test_a_mention_in_a_channel_orion_was_removed_from_reaches_nothing(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    before = set(bucket.names())
    slack.remove_from_channel(PUBLIC)
    # A delivery Slack retries after the app was removed (or a forged one).
    payload = mention(orion, slack, ANA, PUBLIC, "are you still there?")
    orion.wait_handled(payload["event_id"])
    orion.wait_idle()

    assert slack.bot_messages(PUBLIC, thread_of(payload)) == []
    assert slack.calls_to("chat.postEphemeral") == []
    assert claude.calls == []
    assert set(bucket.names()) - before <= {f"events/{payload['event_id']}"}


@pytest.mark.parametrize(
    "hostile",
    ["[" * 50_000 + "]" * 50_000, '{"version": 2, "mode": 7, "changes": {"a": 1}}', "not json"],
    ids=["nested", "wrong-types", "not-json"],
)
def test_a_channels_record_that_cannot_be_read_fails_no_mention(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket, hostile: str
) -> None:
    """Whatever lies in a channel's home under a record's name (a file an upgrade found
    there, a damaged object): read as nothing, and the mention answered."""
    home = channel(PUBLIC)
    claude.reply("Noted.")
    thread_ts = thread_of(mention(orion, slack, ANA, PUBLIC, "we're planning the launch"))
    wait_for_answer(slack, PUBLIC, thread_ts, "Noted.")
    orion.wait_idle()
    damaged = [home.search_key, home.conversation_key(thread_ts)]
    if hostile.startswith("{"):
        # (A profile that cannot be read whole is never written over, and its channel keeps
        # nothing meanwhile: tests/security/test_unreadable_profile.py.)
        damaged.append(home.profile_key)
    for key in damaged:
        bucket.write(key, hostile)

    claude.reply("Tuesday it is.")
    mention(orion, slack, BEN, PUBLIC, "so when is it?", thread_ts=thread_ts)
    wait_for_answer(slack, PUBLIC, thread_ts, "Tuesday it is.")
    orion.wait_idle()

    assert not orion.logged(log_events.SLACK_USER_MESSAGE_FAILED)
    record = record_of(bucket, thread_ts)
    assert [m.text for m in record.messages][-1] == "Tuesday it is.", "kept afresh, readable"
