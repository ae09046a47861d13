"""An uninstall meeting storage failures and a quick reinstall, on the bucket through the
fault proxy: the workspace is sealed once (token gone, tombstone, pending mark), a failed
first pass is left to the second, a reinstall is never silenced by an old uninstall's
retry, and a click while storage is down is told to try again — not to reinstall."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.slack.oauth import uninstall
from app.slack.oauth.tenant_binding import AUTHORIZE_FAILED_TEXT
from tests.e2e.distribution import install, succeeded
from tests.e2e.memory_bucket import Bucket
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer
from tests.security.test_oauth_uninstall import DM_A, TEAM_A, USER, remember_in

BOT = f"installations/-/{TEAM_A}/bot.json"


def of_team_a(bucket: Bucket) -> list[str]:
    return [name for name in bucket.names() if f"/{TEAM_A}" in name]


def test_a_first_pass_that_fails_is_not_retried_and_a_reinstall_right_after_stays(
    distribution_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
) -> None:
    orion = distribution_on_bucket()
    install(orion, slack, TEAM_A)
    remember_in(orion, slack, claude, TEAM_A, DM_A, "Mira")
    # Every deletion of the workspace's objects fails: the seal lands, the first pass not.
    gcs_proxy.add_rule(f"/teams/-/{TEAM_A}/", method="DELETE", status=503)

    orion.post_event(events.app_uninstalled(TEAM_A))
    orion.wait_logged("slack.workspace.first_pass_failed", timeout=30)
    assert f"uninstalls/pending/-/{TEAM_A}" in bucket.names()
    assert BOT not in bucket.names()
    gcs_proxy.clear_rules()

    # The admin reinstalls at once: the pending erasure is finished first, then the new
    # installation stands, and nothing of the old uninstall comes back for it.
    assert succeeded(install(orion, slack, TEAM_A))
    orion.wait_idle()

    assert BOT in bucket.names()
    assert not [n for n in of_team_a(bucket) if "Mira" in (bucket.read(n) or "")]
    assert not orion.logged("slack.workspace.forget_failed"), "sealed once, never again"
    assert f"uninstalls/pending/-/{TEAM_A}" not in bucket.names()


def test_an_uninstall_retried_after_a_reinstall_leaves_the_new_installation_alone(
    distribution_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(uninstall, "FORGET_RETRY_DELAYS_S", (3.0,))
    orion = distribution_on_bucket()
    install(orion, slack, TEAM_A)
    # The tombstone's write fails (the first upload once the token is deleted).
    gcs_proxy.add_rule("uploadType=multipart", method="POST", status=503, times=1)
    orion.post_event(events.app_uninstalled(TEAM_A))
    orion.wait_logged("slack.workspace.forget_failed")

    assert succeeded(install(orion, slack, TEAM_A))  # before the retry comes
    orion.wait_logged("slack.workspace.forget_superseded")

    assert BOT in bucket.names(), "the new installation is not deleted"
    assert f"uninstalls/-/{TEAM_A}" not in bucket.names(), "nor tombstoned"


def test_a_click_while_storage_is_down_is_told_to_try_again_not_to_reinstall(
    distribution_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    slack: FakeSlack,
) -> None:
    orion = distribution_on_bucket()
    install(orion, slack, TEAM_A)
    gcs_proxy.add_rule("", status=503)
    thread_ts = "1712345678.123456"
    click = events.block_actions(
        USER,
        DM_A,
        thread_ts,
        "feedback",
        "good",
        response_url=slack.new_response_url(),
    )

    assert orion.post_form(events.form_body(events.in_team(click, TEAM_A))).status_code == 200

    # After the installation's read has used its storage budget (retries included).
    [answer] = slack.wait_for(
        lambda: slack.calls_to("response_url"), timeout=30, what="the click's answer"
    )
    assert answer.args["text"] == AUTHORIZE_FAILED_TEXT
    assert "reinstall" not in answer.args["text"].lower()
