"""The Home tab as a person uses it: open it, click its buttons, read what it shows."""

from __future__ import annotations

from typing import Any

from tests.fakes import slack_events as events
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer


def open_home(orion: OrionServer, slack: FakeSlack, user: str, dm: str) -> dict[str, Any]:
    """The person opens Orion's Home tab; returns the view they then see."""
    before = len(slack.home_views(user))
    assert orion.post_event(events.app_home_opened(user, dm, tab="home")).status_code == 200
    return next_view(slack, user, before)


def click(
    orion: OrionServer,
    slack: FakeSlack,
    user: str,
    view: dict[str, Any],
    action_id: str,
    value: str | None = None,
) -> dict[str, Any]:
    """`user` clicks a button of `view`; returns the view then published for `user`."""
    before = len(slack.home_views(user))
    payload = events.view_block_actions(user, view, action_id, value)
    assert orion.post_form(events.form_body(payload)).status_code == 200
    return next_view(slack, user, before)


def next_view(slack: FakeSlack, user: str, before: int) -> dict[str, Any]:
    views = slack.wait_for(
        lambda: (v := slack.home_views(user)) and len(v) > before and v,
        timeout=30,
        what=f"a Home tab view for {user}",
    )
    return views[-1]


def shown(view: dict[str, Any]) -> str:
    """Every text of the view, as the person reads it (Slack's escapes undone)."""
    texts: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("text"), str):
                texts.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(view["blocks"])
    text = "\n".join(texts)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
