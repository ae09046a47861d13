"""Distribution mode's optional settings (docs/interface.md, "Configuration"; README
"Configuration"), as an admin installing Orion sees them: `SLACK_SCOPES` is what the install
link asks for, and `SLACK_OAUTH_REDIRECT_URL` is the redirect the link names and the code
exchange repeats, as Slack requires when the app lists several."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.distribution import (
    authorize_link,
    distribution_settings,
    install,
    start_install,
    succeeded,
)
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

SCOPES = "assistant:write,chat:write,im:history"
REDIRECT = "https://orion.example/slack/oauth_redirect"


@pytest.fixture
def orion(slack: FakeSlack, claude: FakeClaude, tmp_path: Path) -> Iterator[OrionServer]:
    settings = distribution_settings(
        slack,
        claude,
        memory_dir=tmp_path / "memories",
        slack_scopes=SCOPES,
        slack_oauth_redirect_url=REDIRECT,
    )
    with OrionServer(settings) as server:
        yield server


def test_the_install_asks_for_the_scopes_set_and_names_the_redirect_set(
    orion: OrionServer, slack: FakeSlack
) -> None:
    page, _ = start_install(orion)
    link = authorize_link(page)
    assert link["scope"] == SCOPES
    assert link["redirect_uri"] == REDIRECT

    assert succeeded(install(orion, slack, "T0DESIGN"))
    [exchange] = slack.calls_to("oauth.v2.access")
    assert exchange.args["redirect_uri"] == REDIRECT
