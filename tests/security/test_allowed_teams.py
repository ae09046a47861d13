"""Distribution mode limited to listed workspaces (SLACK_ALLOWED_TEAMS).

Any workspace that found the install link could install Orion and have its people spend
the operator's Claude key. With a list, another workspace's install is refused (nothing
stored, the token Slack issued revoked), and the events of a workspace installed before
the list was set reach no listener — while its uninstall is still honoured.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config import Settings
from tests.e2e.distribution import (
    distribution_settings,
    failed,
    install,
    open_thread_in,
    say_in,
    stored_keys,
    succeeded,
)
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

LISTED, OTHER = "TAAAA1", "TEVIL9"
USER, DM = "U0LISTED1", "DLISTED1"


def listed_only(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Settings:
    return distribution_settings(
        slack, claude, memory_dir=memory_dir, slack_allowed_teams=f" {LISTED} , E0ORGLIST"
    )


@pytest.fixture
def orion(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Iterator[OrionServer]:
    with OrionServer(listed_only(slack, claude, memory_dir)) as server:
        yield server


def test_a_workspace_not_listed_cannot_install_and_keeps_no_token(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    page = install(orion, slack, OTHER)

    assert failed(page) and page.status_code == 403 and "team_not_allowed" in page.text
    assert [key for key in stored_keys(memory_dir) if OTHER in key] == []
    [revoke] = slack.calls_to("auth.revoke")
    assert revoke.error is None and revoke.token in slack.issued_tokens(OTHER), "revoked"
    [line] = orion.logged("slack.oauth.install_failed")
    assert line["reason"] == "team_not_allowed" and line["team_id"] == OTHER

    # A listed workspace installs, and its people are answered.
    assert succeeded(install(orion, slack, LISTED))
    thread_ts, _ = open_thread_in(orion, slack, LISTED, USER, DM)
    assert thread_ts


def test_a_workspace_installed_before_the_list_is_answered_no_more_but_can_leave(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    with OrionServer(distribution_settings(slack, claude, memory_dir=memory_dir)) as before:
        assert succeeded(install(before, slack, OTHER))
    claude.reply("Hello!")
    token = slack.installed_token(OTHER)
    calls_before = len(slack.calls_with_token(token))
    with OrionServer(listed_only(slack, claude, memory_dir)) as orion:
        thread_ts = slack.open_assistant_thread(DM)
        started = events.in_team(events.assistant_thread_started(USER, DM, thread_ts), OTHER)
        assert orion.post_event(started).status_code == 200
        say_in(orion, slack, OTHER, USER, DM, thread_ts, "Hello?")
        orion.wait_logged("slack.team_not_allowed")
        orion.wait_idle()

        assert len(slack.calls_with_token(token)) == calls_before, "no Slack call"
        assert slack.bot_messages(DM, thread_ts) == []
        assert len(orion.logged("slack.team_not_allowed")) == 2

        # Its uninstall still erases it.
        assert any(OTHER in key for key in stored_keys(memory_dir))
        orion.post_event(events.app_uninstalled(OTHER))
        orion.wait_logged("slack.workspace.forgotten", timeout=30)
        left = [key for key in stored_keys(memory_dir) if f"/{OTHER}" in key]
        assert [key for key in left if not key.startswith("uninstalls/")] == []


@pytest.mark.parametrize("value", ["", " , ", "TAAAA1,../x", "taaaa1", "T" + "A" * 60])
def test_a_malformed_list_stops_start_up_with_a_clear_message(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path, value: str
) -> None:
    with pytest.raises(ValueError, match="slack_allowed_teams"):
        distribution_settings(slack, claude, memory_dir=memory_dir, slack_allowed_teams=value)


def test_an_organisations_id_admits_its_organisation_wide_install(
    orion: OrionServer, slack: FakeSlack
) -> None:
    page = install(orion, slack, None, enterprise_id="E0ORGLIST", is_enterprise_install=True)
    assert succeeded(page)
