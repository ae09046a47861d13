"""Distribution mode end to end: Orion installed in several workspaces through Slack's
OAuth flow, each answered with its own token, each on its own keys, and a workspace that
uninstalls forgotten."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config import DEFAULT_BOT_SCOPES
from tests.e2e.distribution import (
    CLIENT_ID,
    authorize_link,
    distribution_settings,
    install,
    start_install,
    succeeded,
)
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

TEAM_A, TEAM_B, TEAM_NONE = "TAAAA1", "TBBBB2", "TNOPE3"
USER = "U0SAME01"  # the same user id in two workspaces: two different people
DM_A, DM_B = "DAAAA1", "DBBBB2"


@pytest.fixture
def orion(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Iterator[OrionServer]:
    with OrionServer(distribution_settings(slack, claude, memory_dir=memory_dir)) as server:
        yield server


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


def test_an_install_stores_the_workspace_and_its_events_are_answered_with_its_token(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    assert succeeded(install(orion, slack, TEAM_A))
    token = slack.installed_token(TEAM_A)
    record = json.loads((memory_dir / f"installations/-/{TEAM_A}/bot.json").read_text())
    assert record["bot_token"] == token

    slack.open_assistant_thread(DM_A)
    thread_ts = slack.open_assistant_thread(DM_A)
    started = events.in_team(events.assistant_thread_started(USER, DM_A, thread_ts), TEAM_A)
    assert orion.post_event(started).status_code == 200
    slack.wait_for(lambda: slack.bot_messages(DM_A, thread_ts), timeout=30, what="a greeting")
    orion.wait_idle()

    used = {call.token for call in slack.calls if call.method != "oauth.v2.access"}
    assert used == {token}, "every call of the workspace's event used its own token"
