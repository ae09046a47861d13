"""Distribution mode end to end: Orion installed in several workspaces through Slack's
OAuth flow, each answered with its own token, each on its own keys — the same user id in
two workspaces is two people —, a workspace with no installation answered not at all,
and a workspace that uninstalls forgotten."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.config import DEFAULT_BOT_SCOPES
from app.slack.conversation.greeting import GENERIC_GREETING
from app.slack.home.memory_view import ACTION_FORGET_EVERYTHING
from tests.e2e.conversation import (
    main_requests,
    open_thread,
    post_user_message,
    result_text,
    tool_results,
    wait_for_answer,
)
from tests.e2e.distribution import (
    CLIENT_ID,
    authorize_link,
    click_in,
    distribution_settings,
    install,
    open_home_in,
    open_thread_in,
    say_in,
    start_install,
    stored_keys,
    succeeded,
)
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings
from tests.span_log import SpanLog

TEAM_A, TEAM_B, TEAM_NONE = "TAAAA1", "TBBBB2", "TNOPE3"
USER = "U0SAME01"  # the same user id in two workspaces: two different people
DM_A, DM_B, DM_NONE = "DAAAA1", "DBBBB2", "DNOPE3"
ANSWER = "Happy to help with the Zanzibar launch, Mira."
SUMMARY = (
    "# Zanzibar launch review\n"
    "Mira is reviewing the Zanzibar launch, 20% over plan.\n"
    "Welcome: Welcome back, Mira! Shall we pick up the Zanzibar launch review?\n"
    "Next: Pick up the Zanzibar launch review"
)

SUMMARY_B = "# Getting started\nOtto said hello.\nWelcome: Hello again, Otto!\nNext: Say hello"


@pytest.fixture
def orion(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Iterator[OrionServer]:
    with OrionServer(distribution_settings(slack, claude, memory_dir=memory_dir)) as server:
        yield server


def answer_with_summary(
    orion: OrionServer, claude: FakeClaude, *, answer: str = ANSWER, summary: str = SUMMARY
) -> None:
    def respond(body: dict[str, Any]) -> script.ScriptItem:
        is_summary = body["model"] == orion.settings.summary_model
        return script.text(summary if is_summary else answer)

    claude.responder = respond


def converse_in_a(orion: OrionServer, slack: FakeSlack, claude: FakeClaude) -> str:
    """Mira, in workspace A, talks about the Zanzibar launch; Orion learns her name and topic."""
    answer_with_summary(orion, claude)
    thread_ts, _ = open_thread_in(orion, slack, TEAM_A, USER, DM_A)
    say_in(
        orion,
        slack,
        TEAM_A,
        USER,
        DM_A,
        thread_ts,
        "Please call me Mira. Zanzibar launch, 20% over.",
    )
    wait_for_answer(slack, DM_A, thread_ts, ANSWER)
    orion.wait_logged("memory.after_turn", timeout=30)
    orion.wait_idle()
    return thread_ts


def test_the_install_page_links_to_slack_with_the_client_id_scopes_and_a_state(
    orion: OrionServer,
) -> None:
    page, state = start_install(orion)

    assert page.status_code == 200
    link = authorize_link(page)
    assert link["client_id"] == CLIENT_ID
    assert link["scope"].split(",") == list(DEFAULT_BOT_SCOPES)
    assert state is not None and link["state"] == state
    assert f"slack-app-oauth-state={state}" in page.headers["set-cookie"]


def test_each_workspaces_events_are_answered_with_its_own_token(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    assert succeeded(install(orion, slack, TEAM_A))
    assert succeeded(install(orion, slack, TEAM_B))
    token_a, token_b = slack.installed_token(TEAM_A), slack.installed_token(TEAM_B)
    record = json.loads((memory_dir / f"installations/-/{TEAM_A}/bot.json").read_text())
    assert record["bot_token"] == token_a

    claude.reply("Hello from A's thread.")
    thread_a, _ = open_thread_in(orion, slack, TEAM_A, USER, DM_A)
    say_in(orion, slack, TEAM_A, USER, DM_A, thread_a, "Hi")
    wait_for_answer(slack, DM_A, thread_a, "Hello from A's thread.")
    open_thread_in(orion, slack, TEAM_B, USER, DM_B)
    open_home_in(orion, slack, TEAM_B, USER, DM_B)
    orion.wait_idle()

    calls = [call for call in slack.calls if call.method != "oauth.v2.access"]
    assert calls
    for call in calls:
        channel = call.args.get("channel") or call.args.get("channel_id")
        expected = {DM_A: token_a, DM_B: token_b}.get(channel, call.token)
        assert call.token == expected, (call.method, channel)
    assert {call.token for call in slack.calls_to("views.publish")} == {token_b}
    assert {slack.team_of(call) for call in calls} == {TEAM_A, TEAM_B}
    # Each workspace's conversation was kept under its own keys, and logged as its own.
    keys = stored_keys(memory_dir)
    for team in (TEAM_A, TEAM_B):
        conversations = f"people/teams/-/{team}/{USER}/conversations/"
        assert any(key.startswith(conversations) for key in keys), (team, keys)
    done = [line for line in orion.log_lines() if line["message"].endswith(".done")]
    assert done and {line.get("team_id") for line in done} == {TEAM_A, TEAM_B}
    assert not [line for line in orion.log_lines() if line.get("error") == "TenantNotBound"]
    logged = orion.log_stream.getvalue()
    assert token_a not in logged and token_b not in logged, "no token in any log line"


def test_the_same_user_id_in_two_workspaces_shares_nothing(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    install(orion, slack, TEAM_A)
    install(orion, slack, TEAM_B)
    converse_in_a(orion, slack, claude)
    _, again_in_a = open_thread_in(orion, slack, TEAM_A, USER, DM_A)
    assert "Mira" in again_in_a, "workspace A's person is greeted knowing her name"
    home_a = open_home_in(orion, slack, TEAM_A, USER, DM_A)
    assert "Mira" in json.dumps(home_a["blocks"])

    # The same user id in workspace B: a different person, who has told Orion nothing.
    thread_b, greeting_b = open_thread_in(orion, slack, TEAM_B, USER, DM_B)
    answer_with_summary(orion, claude, answer="Hello Otto!", summary=SUMMARY_B)
    asked = len(main_requests(claude, orion))
    say_in(orion, slack, TEAM_B, USER, DM_B, thread_b, "Please call me Otto. Remember me?")
    wait_for_answer(slack, DM_B, thread_b, "Hello Otto!")
    slack.wait_for(lambda: len(orion.logged("memory.after_turn")) >= 2, timeout=30)
    orion.wait_idle()
    home_b = open_home_in(orion, slack, TEAM_B, USER, DM_B)

    assert greeting_b == GENERIC_GREETING
    assert "Otto" in json.dumps(home_b["blocks"])
    request_b = main_requests(claude, orion)[asked]
    for learned_in_a in ("Mira", "Zanzibar"):
        dumped = json.dumps(request_b)
        at = dumped.find(learned_in_a)
        assert at < 0, dumped[max(0, at - 300) : at + 100]
        assert learned_in_a not in json.dumps(home_b["blocks"]), learned_in_a
    # Every object is a workspace's own, or the deployment's.
    for key in stored_keys(memory_dir):
        kind, _, rest = key.partition("/")
        assert kind in ("installations", "oauth-states", "deployment") or rest.startswith(
            (f"teams/-/{TEAM_A}/", f"teams/-/{TEAM_B}/")
        ), key
    holding_mira = [
        key for key in stored_keys(memory_dir) if "Mira" in (memory_dir / key).read_text()
    ]
    assert holding_mira and all(f"teams/-/{TEAM_A}/" in key for key in holding_mira)

    # Forgetting everything in B leaves A's person as they were.
    a_before = {k: (memory_dir / k).read_text() for k in stored_keys(memory_dir) if TEAM_A in k}
    click_in(orion, slack, TEAM_B, USER, home_b, ACTION_FORGET_EVERYTHING)
    orion.wait_idle()
    a_after = {k: (memory_dir / k).read_text() for k in stored_keys(memory_dir) if TEAM_A in k}
    assert a_after == a_before


def test_a_workspace_with_no_installation_gets_no_slack_call_and_nothing_stored(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    install(orion, slack, TEAM_A)
    keys_before, calls_before = stored_keys(memory_dir), len(slack.calls)
    thread_ts = slack.open_assistant_thread(DM_NONE)
    ts = slack.add_user_message(DM_NONE, thread_ts, USER, "hello?")
    payloads = [
        events.assistant_thread_started(USER, DM_NONE, thread_ts),
        events.user_message_in_thread(USER, DM_NONE, thread_ts, "hello?", ts=ts),
        events.app_home_opened(USER, DM_NONE, tab="home"),
        events.top_level_dm(USER, DM_NONE, "hi"),
    ]
    for payload in payloads:
        assert orion.post_event(events.in_team(payload, TEAM_NONE)).status_code == 200
    view = {
        "id": "V1",
        "blocks": [
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "button",
                        "action_id": ACTION_FORGET_EVERYTHING,
                        "text": {"type": "plain_text", "text": "x"},
                    }
                ],
            }
        ],
    }
    click = events.in_team(
        events.view_block_actions(USER, view, ACTION_FORGET_EVERYTHING), TEAM_NONE
    )
    orion.post_form(events.form_body(click))
    orion.wait_idle()

    assert len(slack.calls) == calls_before, [c.method for c in slack.calls[calls_before:]]
    assert stored_keys(memory_dir) == keys_before
    assert claude.requests == []


def test_a_rotating_token_is_refreshed_and_the_refresh_token_kept(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    # Slack's token expires within Bolt's refresh window (two hours): the next event
    # refreshes it first (oauth.v2.access, grant_type=refresh_token) and uses the new one.
    assert succeeded(install(orion, slack, TEAM_A, rotating=True, token_lifetime_s=600))
    first = json.loads((memory_dir / f"installations/-/{TEAM_A}/bot.json").read_text())
    assert first["bot_refresh_token"].startswith("xoxe-1-")

    open_thread_in(orion, slack, TEAM_A, USER, DM_A)
    orion.wait_idle()

    [refresh] = [c for c in slack.calls_to("oauth.v2.access") if c.args.get("grant_type")]
    assert refresh.args["refresh_token"] == first["bot_refresh_token"]
    rotated = json.loads((memory_dir / f"installations/-/{TEAM_A}/bot.json").read_text())
    assert rotated["bot_token"] == slack.installed_token(TEAM_A) != first["bot_token"]
    assert rotated["bot_refresh_token"] != first["bot_refresh_token"]
    answered = [
        c for c in slack.calls if c.method not in ("oauth.v2.access",) and c.at > refresh.at
    ]
    assert answered and {c.token for c in answered} == {rotated["bot_token"]}


def test_traces_and_logs_name_the_workspace(
    spans: SpanLog, orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    install(orion, slack, TEAM_A)
    claude.reply("Traced in A.")
    thread_ts, _ = open_thread_in(orion, slack, TEAM_A, USER, DM_A)
    say_in(orion, slack, TEAM_A, USER, DM_A, thread_ts, "trace me")
    wait_for_answer(slack, DM_A, thread_ts, "Traced in A.")
    slack.wait_for(lambda: spans.named("slack.user_message"), what="the root span")

    [root] = spans.named("slack.user_message")
    attributes = spans.attributes(root)
    assert attributes["user.id"] == USER
    assert json.loads(attributes["langfuse.trace.metadata.team_id"]) == TEAM_A
    [done] = orion.logged("slack.user_message.done")
    assert done["team_id"] == TEAM_A


def test_a_deployment_starts_with_no_single_token_to_check(
    slack: FakeSlack, claude: FakeClaude, gcs_bucket: str
) -> None:
    settings = distribution_settings(slack, claude, gcs_memories_bucket=gcs_bucket)
    with OrionServer(settings, started_as_deployed=True) as orion:
        assert orion.http.get("/readyz").json()["ready"] is True
    assert slack.calls_to("auth.test") == [], "each workspace's token is checked on its events"


def test_single_workspace_mode_keeps_todays_keys_and_has_no_install_routes(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    # SLACK_BOT_TOKEN set (a client id too, as an app that also distributes may have):
    # one workspace, its keys without any workspace segment.
    settings = make_settings(slack, claude, memory_dir=memory_dir, slack_client_id=CLIENT_ID)
    with OrionServer(settings) as orion:
        assert orion.http.get("/slack/install").status_code == 404
        answer_with_summary(orion, claude, answer="Hello Otto!", summary=SUMMARY_B)
        slack.set_dm_channel(USER, DM_B)
        thread_ts, _ = open_thread(orion, slack, USER, DM_B)
        post_user_message(orion, slack, USER, DM_B, thread_ts, "Please call me Otto.")
        wait_for_answer(slack, DM_B, thread_ts, "Hello Otto!")
        orion.wait_logged("memory.after_turn", timeout=30)
        orion.wait_idle()

    keys = stored_keys(memory_dir)
    assert f"people/{USER}/memory/preferences.json" in keys
    assert any(key.startswith(f"people/{USER}/conversations/") for key in keys)
    assert not [key for key in keys if "/teams/" in key or key.startswith("installations/")]


def test_a_mention_is_answered_with_its_workspaces_token_on_its_own_keys(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    """Channels in distribution mode: each workspace's channel memory is its own, and a
    public channel of one workspace is recalled in no other."""
    install(orion, slack, TEAM_A)
    install(orion, slack, TEAM_B)
    slack.add_channel("CAAAA1", members=(USER,))
    slack.add_channel("CBBBB2", members=(USER,))
    path = "/memories/channels/CAAAA1/decisions.md"
    claude.reply_tool_use("memory", {"command": "create", "path": path, "file_text": "Zanzibar"})
    claude.reply("Remembered for the channel.")
    ts = slack.add_user_message("CAAAA1", None, USER, "<@UBOT> remember the Zanzibar launch")
    mention = events.app_mention(USER, "CAAAA1", "<@UBOT> remember the Zanzibar launch", ts=ts)
    assert orion.post_event(events.in_team(mention, TEAM_A)).status_code == 200
    wait_for_answer(slack, "CAAAA1", ts, "Remembered for the channel.")
    orion.wait_idle()

    streams = [c for c in slack.calls_to("chat.startStream") if not c.error]
    assert [slack.team_of(c) for c in streams] == [TEAM_A]
    assert streams[0].args["recipient_team_id"] == TEAM_A
    memory = memory_dir / f"channels/teams/-/{TEAM_A}/CAAAA1/memory/decisions.md"
    assert memory.read_text() == "Zanzibar"

    # Workspace B's channel: its own memory only, and none of A's through the tool.
    claude.reply_tool_use("memory", {"command": "view", "path": path})
    claude.reply("Nothing here.")
    ts_b = slack.add_user_message("CBBBB2", None, USER, "<@UBOT> what about Zanzibar?")
    mention_b = events.app_mention(USER, "CBBBB2", "<@UBOT> what about Zanzibar?", ts=ts_b)
    assert orion.post_event(events.in_team(mention_b, TEAM_B)).status_code == 200
    wait_for_answer(slack, "CBBBB2", ts_b, "Nothing here.")
    [result] = tool_results(main_requests(claude, orion)[-1])
    assert "Access denied" in result_text(result) and "Zanzibar" not in result_text(result)
