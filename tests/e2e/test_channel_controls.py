"""Who controls a channel's memory, end to end: its members see and forget it (`/orion
memory`, membership asked of Slack), admins choose what Orion does in channels (admin
status asked of Slack), a channel's life erases it or sets it aside, and a person's
Forget everything takes what they said out of channel transcripts while the channel's
memory of what was decided stays."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from app.learning.conversation_record import ConversationRecord
from app.memory.homes import channel
from app.slack.channel_view.channel_memory_view import ACTION_FORGET_ALL, ACTION_FORGET_FILE
from app.slack.channel_view.orion_command import ADMINS_ONLY, NOT_A_MEMBER
from app.slack.conversation.channel_turns import NOT_WITH_OTHER_ORGANISATIONS, OFF_HERE
from tests import layout
from tests.e2e.channels import (
    ADMIN,
    ANA,
    BEN,
    CARA,
    PRIVATE,
    PUBLIC,
    answers,
    click,
    command,
    ephemerals,
    mention,
    say,
    set_up_channels,
    shown_text,
    thread_of,
    wait_for_answer,
)
from tests.e2e.memory_bucket import Bucket
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_model import BOT_USER_ID
from tests.orion_server import OrionServer

HOME = channel(PUBLIC)
DECISIONS = f"{HOME.memory_prefix}decisions.md"
OWNERS = f"{HOME.memory_prefix}owners.md"


def changes(bucket: Bucket) -> list[dict]:
    """Who changed the channel's memory, newest first (its profile's `changes`)."""
    return list(json.loads(bucket.read(HOME.profile_key) or "{}").get("changes", []))


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], slack: FakeSlack) -> OrionServer:
    set_up_channels(slack)
    return orion_on_bucket()


def forgettable(shown: dict) -> list[str]:
    """The files an answer of `/orion memory` offers to forget, as its buttons name them."""
    return [
        str(button["value"])
        for _, button in events.buttons({"blocks": shown.get("blocks") or []})
        if button["action_id"] == ACTION_FORGET_FILE
    ]


def remembered(bucket: Bucket) -> None:
    bucket.write(DECISIONS, "- Launch: Tuesday\n")
    bucket.write(OWNERS, "- Billing: Ben\n")


def test_a_member_sees_the_channels_memory_and_forgets_one_file(
    orion: OrionServer, slack: FakeSlack, bucket: Bucket
) -> None:
    remembered(bucket)
    shown = command(orion, slack, ANA, PUBLIC, "memory")
    text = shown_text(shown)
    assert "decisions.md" in text and "owners.md" in text
    assert "answers when mentioned and remembers" in text

    assert forgettable(shown) == ["decisions.md", "owners.md"]

    after = click(orion, slack, ANA, PUBLIC, shown, ACTION_FORGET_FILE, "decisions.md")
    assert bucket.read(DECISIONS) is None
    assert bucket.read(OWNERS) == "- Billing: Ben\n"
    assert forgettable(after) == ["owners.md"]
    [change] = changes(bucket)
    assert (change["by"], change["action"], change["what"]) == (
        ANA,
        "forget",
        f"/memories/channels/{PUBLIC}/decisions.md",
    )
    assert f"<@{ANA}> forgot" in shown_text(after)


def test_a_member_forgets_everything_the_channel_keeps(
    orion: OrionServer, slack: FakeSlack, bucket: Bucket
) -> None:
    remembered(bucket)
    shown = command(orion, slack, BEN, PUBLIC)
    click(orion, slack, BEN, PUBLIC, shown, ACTION_FORGET_ALL)
    assert not [n for n in bucket.names() if n.startswith(HOME.memory_prefix)]
    assert [(c["by"], c["action"], c["what"]) for c in changes(bucket)] == [
        (BEN, "forget", "everything")
    ]


def test_someone_outside_the_channel_sees_and_forgets_nothing(
    orion: OrionServer, slack: FakeSlack, bucket: Bucket
) -> None:
    remembered(bucket)
    # Cara is not in #launch: Slack's member list says so, whatever the request says.
    assert shown_text(command(orion, slack, CARA, PUBLIC)) == NOT_A_MEMBER
    shown = command(orion, slack, ANA, PUBLIC)
    assert shown_text(click(orion, slack, CARA, PUBLIC, shown, ACTION_FORGET_ALL)) == NOT_A_MEMBER
    assert bucket.read(DECISIONS) == "- Launch: Tuesday\n"


def test_only_an_admin_turns_orion_off_in_a_channel_and_then_it_says_so(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    assert shown_text(command(orion, slack, ANA, PUBLIC, "channel off")) == ADMINS_ONLY
    assert "now does not answer" in shown_text(command(orion, slack, ADMIN, PUBLIC, "channel off"))

    payload = mention(orion, slack, BEN, PUBLIC, "are you there?")
    orion.wait_handled(payload["event_id"])
    assert ephemerals(slack, BEN) == [OFF_HERE]
    assert answers(slack, PUBLIC, thread_of(payload)) == []
    assert claude.calls == []
    audit = [a for a in orion.logged("audit.memory") if a["action"] == "setting"]
    assert [(a["scope"], a["actor"]) for a in audit] == [(f"channel:{PUBLIC}", ADMIN)]


def test_an_admins_off_outlasts_orion_being_removed_and_added_back(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    assert "now does not answer" in shown_text(command(orion, slack, ADMIN, PUBLIC, "channel off"))
    for event in (
        events.channel_event("channel_left", PUBLIC, actor_id=ADMIN),
        events.member_joined_channel(BOT_USER_ID, PUBLIC),
    ):
        assert orion.post_event(event).status_code == 200
        orion.wait_handled(event["event_id"])

    payload = mention(orion, slack, BEN, PUBLIC, "are you there?")
    orion.wait_handled(payload["event_id"])
    assert ephemerals(slack, BEN) == [OFF_HERE]
    assert claude.calls == []


def test_answers_only_keeps_nothing_of_the_channel(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    command(orion, slack, ADMIN, PUBLIC, "workspace answers")
    claude.reply("Here you go.")
    payload = mention(orion, slack, ANA, PUBLIC, "a question, with nothing to keep from it")
    wait_for_answer(slack, PUBLIC, thread_of(payload), "Here you go.")
    orion.wait_idle()
    assert bucket.read(HOME.conversation_key(thread_of(payload))) is None
    assert not [n for n in bucket.names() if n.startswith(("channels/", "people/"))]
    # Claude was offered no memory tool and no recall.
    assert "tools" not in claude.requests[0] or claude.requests[0]["tools"] == []


def test_a_channel_shared_with_another_organisation_is_not_answered(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    slack.change_channel(PUBLIC, shared_externally=True)
    payload = mention(orion, slack, ANA, PUBLIC, "hello", shared_externally=True)
    orion.wait_handled(payload["event_id"])
    assert ephemerals(slack, ANA) == [NOT_WITH_OTHER_ORGANISATIONS]
    assert claude.calls == []


@pytest.mark.parametrize(
    "removed",
    [
        events.channel_event("channel_left", PUBLIC, actor_id=ADMIN),
        events.member_left_channel(BOT_USER_ID, PUBLIC),
        events.channel_event("channel_deleted", PUBLIC),
    ],
    ids=["channel_left", "member_left_channel", "channel_deleted"],
)
def test_orion_removed_or_the_channel_deleted_erases_the_channels_memory(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    removed: dict,
) -> None:
    claude.reply("Noted.")
    thread_ts = thread_of(mention(orion, slack, ANA, PUBLIC, "noted for the channel"))
    wait_for_answer(slack, PUBLIC, thread_ts, "Noted.")
    orion.wait_idle()
    remembered(bucket)
    assert bucket.read(HOME.conversation_key(thread_ts)) is not None

    assert orion.post_event(removed).status_code == 200
    orion.wait_handled(removed["event_id"])
    left = [n for n in bucket.names() if n.startswith(HOME.prefix)]
    # Nothing but the erasure's mark: the channel's profile, holding when it was (and
    # since when the channel is as Slack last said: no one's content).
    assert left == [HOME.profile_key]
    mark = json.loads(bucket.read(HOME.profile_key) or "{}")
    assert "erased_at" in mark and set(mark) <= {"version", "erased_at", "state", "mode"}
    assert set(mark.get("state", {})) <= {"since", "event"}


def test_someone_else_leaving_erases_nothing(
    orion: OrionServer, slack: FakeSlack, bucket: Bucket
) -> None:
    remembered(bucket)
    left = events.member_left_channel(BEN, PUBLIC)
    assert orion.post_event(left).status_code == 200
    orion.wait_handled(left["event_id"])
    assert bucket.read(DECISIONS) is not None


def test_archiving_sets_the_memory_aside_and_unarchiving_brings_it_back(
    orion: OrionServer, slack: FakeSlack, bucket: Bucket
) -> None:
    remembered(bucket)
    archived = events.channel_event("channel_archive", PUBLIC, user=ADMIN)
    assert orion.post_event(archived).status_code == 200
    orion.wait_handled(archived["event_id"])
    aside = HOME.archived_prefix
    assert bucket.read(DECISIONS) is None
    assert bucket.read(f"{aside}decisions.md") == "- Launch: Tuesday\n"  # expires with retention

    back = events.channel_event("channel_unarchive", PUBLIC, user=ADMIN)
    assert orion.post_event(back).status_code == 200
    orion.wait_handled(back["event_id"])
    assert bucket.read(DECISIONS) == "- Launch: Tuesday\n"
    assert not [n for n in bucket.names() if n.startswith(aside)]


def test_forget_everything_takes_a_persons_words_out_of_channels_and_leaves_the_channels_memory(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    claude.reply("Got it.")
    thread_ts = thread_of(
        mention(
            orion,
            slack,
            ANA,
            PRIVATE,
            "the secret plan is to launch the billing page on Tuesday after the payments "
            "review, please keep that in mind for this channel",
        )
    )
    wait_for_answer(slack, PRIVATE, thread_ts, "Got it.")
    orion.wait_idle()
    say(slack, BEN, PRIVATE, thread_ts, "Ben agrees with the Tuesday plan")
    claude.reply("Both noted.")
    mention(orion, slack, BEN, PRIVATE, "noted?", thread_ts=thread_ts)
    wait_for_answer(slack, PRIVATE, thread_ts, "Both noted.")
    orion.wait_idle()
    private = channel(PRIVATE)
    summaries = (
        layout.summary_in(bucket.read(private.conversation_key(thread_ts))),
        layout.summary_of_latest(bucket.read(private.profile_key)),
    )
    assert all(summaries)

    # Ana forgets everything, from her Home tab.
    orion.post_event(events.app_home_opened(ANA, slack.dm_channel(ANA), tab="home"))
    view = slack.wait_for(lambda: slack.home_view(ANA), what="Ana's Home tab")
    from app.slack.home.memory_view import ACTION_FORGET_EVERYTHING

    click_payload = events.view_block_actions(ANA, view, ACTION_FORGET_EVERYTHING)
    assert orion.post_form(events.form_body(click_payload)).status_code == 200
    orion.wait_logged("memory.forget")
    orion.wait_idle()

    record = ConversationRecord.parse(bucket.read(private.conversation_key(thread_ts)))
    assert record is not None
    assert ANA not in record.authors
    assert [m.user for m in record.messages if m.role == "user"] == [BEN, BEN]
    # The channel's memory of what was decided stays: its summaries are the channel's.
    assert (
        layout.summary_in(bucket.read(private.conversation_key(thread_ts))),
        layout.summary_of_latest(bucket.read(private.profile_key)),
    ) == summaries
