"""Distribution mode in the end-to-end tests: Orion serving many workspaces, each
installed through the OAuth flow as an admin would (install page → Slack's authorize
page, here the fake's `approve_install` → the redirect back to Orion)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx

from app.config import Settings
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings

CLIENT_ID = "1111.2222"
CLIENT_SECRET = "test-client-secret-0123456789"
STATE_COOKIE = "slack-app-oauth-state"
AUTHORIZE_URL = "https://slack.example/oauth/v2/authorize"


def distribution_overrides(slack: FakeSlack) -> dict[str, Any]:
    """The settings of distribution mode (an OAuth app, no bot token), and the fake Slack
    told the app's credentials."""
    slack.accept_client(CLIENT_ID, CLIENT_SECRET)
    return {
        "slack_bot_token": None,
        "slack_client_id": CLIENT_ID,
        "slack_client_secret": CLIENT_SECRET,
        "slack_authorize_url": AUTHORIZE_URL,
    }


def distribution_settings(slack: FakeSlack, claude: FakeClaude, **overrides: Any) -> Settings:
    """Orion's settings in distribution mode."""
    return make_settings(slack, claude, **(distribution_overrides(slack) | overrides))


def start_install(orion: OrionServer) -> tuple[httpx.Response, str | None]:
    """An admin opens the install page; returns it and the state of its authorize link."""
    page = orion.http.get("/slack/install")
    return page, authorize_link(page).get("state")


def authorize_link(page: httpx.Response) -> dict[str, str]:
    """The arguments of the install page's link to Slack's authorize page ({}: none)."""
    link = re.search(f'href="({re.escape(AUTHORIZE_URL)}[^"]*)"', page.text)
    if link is None:
        return {}
    query = parse_qs(urlparse(html.unescape(link.group(1))).query)
    return {name: values[0] for name, values in query.items()}


def finish_install(
    orion: OrionServer, *, code: str, state: str | None, cookie: str | None
) -> httpx.Response:
    """Slack redirects the admin's browser back to Orion (with its state cookie)."""
    params = {"code": code} | ({"state": state} if state is not None else {})
    headers = {"Cookie": f"{STATE_COOKIE}={cookie}"} if cookie is not None else {}
    return orion.http.get("/slack/oauth_redirect", params=params, headers=headers)


def install(
    orion: OrionServer,
    slack: FakeSlack,
    team_id: str | None,
    *,
    enterprise_id: str | None = None,
    is_enterprise_install: bool = False,
    rotating: bool = False,
    token_lifetime_s: int = 43_200,
) -> httpx.Response:
    """The whole install, as an admin of `team_id` goes through it; returns the last page."""
    page, state = start_install(orion)
    assert page.status_code == 200 and state is not None, page.text
    code = slack.approve_install(
        team_id,
        enterprise_id=enterprise_id,
        is_enterprise_install=is_enterprise_install,
        rotating=rotating,
        token_lifetime_s=token_lifetime_s,
    )
    return finish_install(orion, code=code, state=state, cookie=state)


def succeeded(page: httpx.Response) -> bool:
    return page.status_code == 200 and "Thank you!" in page.text


def failed(page: httpx.Response) -> bool:
    return "Something Went Wrong" in page.text


# --- what a person does in one of the workspaces ------------------------------------------


def open_thread_in(
    orion: OrionServer, slack: FakeSlack, team: str, user: str, channel: str
) -> tuple[str, str]:
    """`user` of `team` opens an assistant thread in `channel`, their DM with the app there;
    returns its ts and Orion's greeting."""
    slack.set_dm_channel(user, channel, team)
    thread_ts = slack.open_assistant_thread(channel)
    started = events.in_team(events.assistant_thread_started(user, channel, thread_ts), team)
    assert orion.post_event(started).status_code == 200
    [greeting] = slack.wait_for(
        lambda: slack.bot_messages(channel, thread_ts), timeout=30, what=f"a greeting in {team}"
    )
    return thread_ts, greeting.text


def say_in(
    orion: OrionServer,
    slack: FakeSlack,
    team: str,
    user: str,
    channel: str,
    thread_ts: str,
    text: str,
) -> None:
    ts = slack.add_user_message(channel, thread_ts, user, text)
    payload = events.user_message_in_thread(user, channel, thread_ts, text, ts=ts)
    assert orion.post_event(events.in_team(payload, team)).status_code == 200


def open_home_in(
    orion: OrionServer, slack: FakeSlack, team: str, user: str, dm: str
) -> dict[str, Any]:
    """`user` of `team` opens Orion's Home tab; returns the view published for them there."""
    before = len(slack.home_views(user, team))
    opened = events.in_team(events.app_home_opened(user, dm, tab="home"), team)
    assert orion.post_event(opened).status_code == 200
    views = slack.wait_for(
        lambda: (v := slack.home_views(user, team)) and len(v) > before and v,
        timeout=30,
        what=f"a Home tab view for {user} in {team}",
    )
    return views[-1]


def click_in(
    orion: OrionServer,
    slack: FakeSlack,
    team: str,
    user: str,
    view: dict[str, Any],
    action_id: str,
) -> dict[str, Any]:
    before = len(slack.home_views(user, team))
    payload = events.in_team(events.view_block_actions(user, view, action_id), team)
    assert orion.post_form(events.form_body(payload)).status_code == 200
    views = slack.wait_for(
        lambda: (v := slack.home_views(user, team)) and len(v) > before and v,
        timeout=30,
        what=f"a Home tab view for {user} in {team} after the click",
    )
    return views[-1]


def stored_keys(memory_dir: Path) -> list[str]:
    return sorted(
        p.relative_to(memory_dir).as_posix()
        for p in memory_dir.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    )
