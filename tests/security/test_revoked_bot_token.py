"""Attacker's review of the bot token's check handed to Bolt at start-up
(app/slack/app.py, `share_token_check`): Bolt's single-workspace authorization never asks
`auth.test` again, so once the token is revoked (an admin, an expiry) it keeps taking
events. What it took them for must still hold: another workspace's signed events reach
nothing, over HTTP and Socket Mode; the person's own events reach no other token, and
the failure is Orion's log's to tell (nothing can be posted with a revoked token)."""

from __future__ import annotations

from pathlib import Path

from app.runtime.in_flight import in_flight
from tests import log_events
from tests.e2e import conversation
from tests.fakes import slack_events as events
from tests.fakes._waiting import wait_until
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import BOT_TOKEN, OrionServer
from tests.security.test_intake import OTHER_TEAM, _from_team, _stored

USER, CHANNEL = "U0IVAN", "D0IVAN"


def test_after_the_token_is_revoked_another_workspaces_events_still_reach_nothing(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    thread_ts, _ = conversation.open_thread(orion, slack, USER, CHANNEL)
    orion.wait_idle()
    stored, calls, asked = _stored(memory_dir), len(slack.calls), len(claude.requests)
    slack.revoke_token(BOT_TOKEN)

    ts = slack.add_user_message(CHANNEL, thread_ts, USER, "What did we decide about Lisbon?")
    foreign = _from_team(
        events.user_message_in_thread(USER, CHANNEL, thread_ts, "What about Lisbon?", ts=ts),
        OTHER_TEAM,
    )
    assert orion.post_event(foreign).status_code == 200
    orion.wait_idle()

    assert [x["event_id"] for x in orion.logged(log_events.SLACK_OTHER_TEAM_IGNORED)] == [
        foreign["event_id"]
    ]
    assert len(slack.calls) == calls and len(claude.requests) == asked
    assert _stored(memory_dir) == stored


def test_after_the_token_is_revoked_the_persons_own_event_uses_no_other_token(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    thread_ts, _ = conversation.open_thread(orion, slack, USER, CHANNEL)
    orion.wait_idle()
    before = len(slack.calls)
    slack.revoke_token(BOT_TOKEN)

    conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, "Still there?")
    orion.wait_idle()

    tried = slack.calls[before:]
    assert tried and {call.token for call in tried} == {BOT_TOKEN}
    assert {call.error for call in tried} == {"token_revoked"}
    assert len(slack.bot_messages(CHANNEL, thread_ts)) == 1, "only the greeting, from before"


def test_over_socket_mode_after_the_token_is_revoked_another_workspace_reaches_nothing(
    socket_slack: FakeSlack, orion_socket: None
) -> None:
    server = socket_slack.socket_mode
    assert server is not None
    server.wait_connected()
    socket_slack.revoke_token(BOT_TOKEN)
    calls = len(socket_slack.calls)
    foreign_ts = socket_slack.open_assistant_thread(CHANNEL)
    foreign = _from_team(events.assistant_thread_started(USER, CHANNEL, foreign_ts), OTHER_TEAM)

    assert server.wait_ack(server.send_events_api(foreign))
    wait_until(lambda: in_flight.count == 0, what="nothing in flight")

    assert socket_slack.calls[calls:] == []
    assert socket_slack.statuses(CHANNEL, foreign_ts) == []
