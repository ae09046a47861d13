"""Recall in channels follows what Slack lets the person see (issue 44).

- **A guest** — multi-channel (`is_restricted`) or single-channel (`is_ultra_restricted`)
  — who mentions Orion in the one public channel they are in recalls that channel's
  threads and nothing of any other channel's, however they ask. A member made a guest
  counts as one from their next mention; a person Slack does not describe counts as one.
- Slack is asked about the person beside the turn's other reads: the memory reads do not
  wait for it.
- **An organisation-wide install** (Enterprise Grid) sees the channels of every workspace
  of the organisation: recall never crosses from one workspace's channel to another's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

import pytest

from app.memory.scopes import conversation_record_key
from tests.e2e.channels import (
    ANA,
    BEN,
    OTHER_PUBLIC,
    PUBLIC,
    say,
    set_up_channels,
    wait_for_answer,
)
from tests.e2e.conversation import main_requests
from tests.e2e.distribution import install, succeeded
from tests.e2e.memory_bucket import Bucket
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer
from tests.security.test_channel_scopes import (
    PUBLIC_NOTE,
    ask_with_tools,
    recall,
    seed_channel_thread,
)

GUEST = "U0GUEST1"
OWN_NOTE = "Launch decided: kangaroo mascot on the landing page"


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], slack: FakeSlack) -> OrionServer:
    set_up_channels(slack)
    return orion_on_bucket()


def recall_tool(request: dict[str, Any]) -> dict[str, Any]:
    [tool] = [t for t in request.get("tools") or [] if t["name"] == "recall"]
    return tool


@pytest.mark.parametrize("single_channel", [False, True], ids=["multi_channel", "single_channel"])
def test_a_guest_recalls_nothing_beyond_the_channel_they_are_in(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    single_channel: bool,
) -> None:
    seed_channel_thread(bucket, OTHER_PUBLIC, "Kangaroo pricing", PUBLIC_NOTE)
    seed_channel_thread(bucket, PUBLIC, "Kangaroo launch", OWN_NOTE)
    slack.add_guest(GUEST, (PUBLIC,), single_channel=single_channel)

    [found] = ask_with_tools(
        orion,
        slack,
        claude,
        PUBLIC,
        [recall("kangaroo")],
        user=GUEST,
        text="Search every public channel of the workspace for kangaroo, not just this one.",
    )

    assert OWN_NOTE in found, "the channel they are in is theirs to recall"
    assert PUBLIC_NOTE not in found and OTHER_PUBLIC not in found
    assert (
        "other public channels" not in recall_tool(main_requests(claude, orion)[0])["description"]
    )
    asked = {c.args.get("channel") for c in slack.calls_to("conversations.info")}
    assert asked == {PUBLIC}, "no other channel was even looked up"


def test_a_member_made_a_guest_recalls_only_their_channel_from_their_next_mention(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    seed_channel_thread(bucket, OTHER_PUBLIC, "Kangaroo pricing", PUBLIC_NOTE)
    *_, as_member = ask_with_tools(orion, slack, claude, PUBLIC, [recall("kangaroo")])
    assert PUBLIC_NOTE in as_member

    slack.set_user(BEN, is_restricted=True)  # an admin makes Ben a guest
    *_, as_guest = ask_with_tools(orion, slack, claude, PUBLIC, [recall("kangaroo")])
    assert PUBLIC_NOTE not in as_guest

    slack.set_user(BEN, is_restricted=False)  # and a member again
    *_, again = ask_with_tools(orion, slack, claude, PUBLIC, [recall("kangaroo")])
    assert PUBLIC_NOTE in again
    assert len(slack.calls_to("users.info")) == 3, "asked once a turn, never kept longer"


def test_a_person_slack_does_not_describe_recalls_only_the_channel(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    seed_channel_thread(bucket, OTHER_PUBLIC, "Kangaroo pricing", PUBLIC_NOTE)
    slack.inject_error("users.info", error="internal_error", status=500, times=None)

    [found] = ask_with_tools(orion, slack, claude, PUBLIC, [recall("kangaroo")])

    assert PUBLIC_NOTE not in found
    assert orion.logged("slack.channel.recall_here_only")


def test_slack_is_asked_about_the_person_beside_the_memory_reads(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    gcs_proxy: FaultyProxy,
) -> None:
    root = slack.add_user_message(PUBLIC, None, ANA, "Planning the launch in this thread")
    claude.reply("Tuesday.")
    held = slack.hold("users.info")
    try:
        ts = say(slack, BEN, PUBLIC, root, "<@UBOT> when?")
        payload = events.app_mention(BEN, PUBLIC, "<@UBOT> when?", ts=ts, thread_ts=root)
        assert orion.post_event(payload).status_code == 200
        record = conversation_record_key(root)
        # While Slack has not answered about Ben, the thread's record is already asked for.
        slack.wait_for(
            lambda: any(record in unquote(r.path_qs) for r in gcs_proxy.requests),
            what="the conversation's record read while users.info is held",
        )
        assert not [c for c in slack.calls_to("users.info")], "users.info is still held"
    finally:
        held.set()
    wait_for_answer(slack, PUBLIC, root, "Tuesday.")


# --- an organisation-wide install -----------------------------------------------------------

ORG, WORKSPACE_A, WORKSPACE_B = "E0ORG1", "T0WSA1", "T0WSB1"
A_CHANNEL, B_CHANNEL, B_OTHER = "C0ALAUNCH", "C0BPRICING", "C0BSALES"
B_SECRET = "Workspace B decided: kangaroo pricing is confidential until March"


def mention_in(
    orion: OrionServer, slack: FakeSlack, team: str, user: str, channel: str, text: str
) -> str:
    """`user` of workspace `team` mentions Orion in `channel` (the organisation's install
    gets the event); returns the thread."""
    ts = slack.add_user_message(channel, None, user, f"<@UBOT> {text}")
    payload = events.app_mention(user, channel, f"<@UBOT> {text}", ts=ts)
    in_org = events.in_team(payload, team, enterprise_id=ORG, is_enterprise_install=True)
    assert orion.post_event(in_org).status_code == 200
    return ts


def test_an_organisation_wide_install_never_recalls_across_workspaces(
    distribution_on_bucket: Callable[..., OrionServer], slack: FakeSlack, claude: FakeClaude
) -> None:
    slack.add_channel(A_CHANNEL, members=(ANA,), workspaces=(WORKSPACE_A,))
    slack.add_channel(B_CHANNEL, members=(BEN,), workspaces=(WORKSPACE_B,))
    slack.add_channel(B_OTHER, members=(BEN,), workspaces=(WORKSPACE_B,))
    orion = distribution_on_bucket()
    assert succeeded(install(orion, slack, None, enterprise_id=ORG, is_enterprise_install=True))

    # In workspace B, Ben discusses kangaroo pricing with Orion: the channel remembers it.
    claude.reply("Noted: kangaroo pricing stays confidential until March.")
    told = mention_in(orion, slack, WORKSPACE_B, BEN, B_CHANNEL, B_SECRET)
    wait_for_answer(
        slack, B_CHANNEL, told, "Noted: kangaroo pricing stays confidential until March."
    )
    orion.wait_idle()

    def recalled(team: str, user: str, channel: str) -> str:
        pending = [script.tool_use("recall", {"query": "kangaroo pricing"})]

        def respond(body: dict[str, Any]) -> script.ScriptItem | None:
            if body["model"] != orion.settings.anthropic_model:
                return None
            return pending.pop(0) if pending else script.text(f"Looked in {channel}.")

        claude.responder = respond
        thread = mention_in(orion, slack, team, user, channel, "what about kangaroo pricing?")
        wait_for_answer(slack, channel, thread, f"Looked in {channel}.")
        orion.wait_idle()
        return str(main_requests(claude, orion)[-1]["messages"])

    # Another channel of workspace B recalls it (the same workspace's public channel)...
    assert "confidential until March" in recalled(WORKSPACE_B, BEN, B_OTHER)
    # ...a channel of workspace A never does.
    from_a = recalled(WORKSPACE_A, ANA, A_CHANNEL)
    assert "confidential until March" not in from_a
