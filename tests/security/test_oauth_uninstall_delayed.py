"""An `app_uninstalled` or `tokens_revoked` older than the workspace's current installation
erases nothing.

Slack can deliver an event late, or again (a retry, a backlog after an outage). An uninstall
that arrives after the workspace reinstalled tells of the old installation, already
erased when it happened: acting on it wiped the new installation and everything its people
had said since. Orion compares the event's time (`event_time`, which Slack sets when the
event happens) with the installation's, and keeps the newer installation.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.e2e.distribution import install, succeeded
from tests.e2e.memory_bucket import Bucket
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer
from tests.security.test_oauth_uninstall import DM_A, TEAM_A, remember_in

BOT = f"installations/-/{TEAM_A}/bot.json"


@pytest.mark.parametrize(
    "uninstalled",
    [
        pytest.param(lambda: events.app_uninstalled(TEAM_A), id="app_uninstalled"),
        pytest.param(lambda: events.tokens_revoked(TEAM_A, bot=["UBOT"]), id="tokens_revoked"),
    ],
)
def test_an_uninstall_from_before_the_reinstall_leaves_the_new_installation_and_its_memory(
    distribution_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    uninstalled: Callable[[], dict[str, Any]],
) -> None:
    orion = distribution_on_bucket()
    install(orion, slack, TEAM_A)
    # The workspace uninstalls; Slack's event for it is held up (its time is now).
    late = uninstalled()
    late["event_time"] = int(time.time()) - 5
    orion.post_event(uninstalled())
    orion.wait_logged("slack.workspace.forgotten", timeout=30)
    # The admin reinstalls, and a person tells Orion their name.
    assert succeeded(install(orion, slack, TEAM_A))
    remember_in(orion, slack, claude, TEAM_A, DM_A, "Mira")
    remembered = [name for name in bucket.names() if "Mira" in (bucket.read(name) or "")]
    assert remembered

    # The held-up event arrives.
    assert orion.post_event(late).status_code == 200
    orion.wait_idle()

    assert BOT in bucket.names(), "the new installation stays"
    assert [name for name in bucket.names() if "Mira" in (bucket.read(name) or "")] == remembered
    assert len(orion.logged("slack.workspace.forgotten")) == 1


def test_an_uninstall_after_the_installation_still_erases_it(
    distribution_on_bucket: Callable[..., OrionServer], slack: FakeSlack, bucket: Bucket
) -> None:
    orion = distribution_on_bucket()
    install(orion, slack, TEAM_A)
    orion.post_event(events.app_uninstalled(TEAM_A))
    orion.wait_logged("slack.workspace.forgotten", timeout=30)
    assert BOT not in bucket.names()
