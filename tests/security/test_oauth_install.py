"""Attacks on the install flow (`GET /slack/install`, `GET /slack/oauth_redirect`) and its
worst conditions: a bad, replayed, expired or missing state, a hostile code, storage slow
or down, two instances finishing the same install. Each refusal is Bolt's failure page,
with nothing exchanged or stored; each outage heals on a retry."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.learning.upgrade import LAYOUT_MARKER
from app.slack.oauth.state_store import signed_state
from tests.e2e.distribution import (
    distribution_settings,
    failed,
    finish_install,
    install,
    start_install,
    succeeded,
)
from tests.e2e.memory_bucket import Bucket
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

TEAM = "TAAAA1"


@pytest.fixture
def orion(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Iterator[OrionServer]:
    with OrionServer(distribution_settings(slack, claude, memory_dir=memory_dir)) as server:
        yield server


def stored(memory_dir: Path) -> list[str]:
    """Every object in the memory directory but the install states and the layout mark
    every start makes (app/learning/upgrade.py)."""
    return sorted(
        key
        for p in memory_dir.rglob("*")
        if p.is_file() and not p.name.startswith(".") and "oauth-states" not in p.parts
        if (key := p.relative_to(memory_dir).as_posix()) != LAYOUT_MARKER
    )


def exchanges(slack: FakeSlack) -> int:
    return len(slack.calls_to("oauth.v2.access"))


def test_a_replayed_redirect_is_refused_and_exchanges_nothing(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    _, state = start_install(orion)
    assert state is not None
    first = slack.approve_install(TEAM)
    assert succeeded(finish_install(orion, code=first, state=state, cookie=state))
    before = {name: (memory_dir / name).read_text() for name in stored(memory_dir)}

    # The same redirect again (a replay), now with a code of the attacker's own workspace.
    second = slack.approve_install("TEVIL9")
    replay = finish_install(orion, code=second, state=state, cookie=state)

    assert failed(replay) and replay.status_code == 401 and "invalid_state" in replay.text
    assert exchanges(slack) == 1, "the replay's code was never exchanged"
    assert {name: (memory_dir / name).read_text() for name in stored(memory_dir)} == before


@pytest.mark.parametrize(
    "state, cookie",
    [
        pytest.param("issued", None, id="no cookie: a link made in another browser"),
        pytest.param("issued", "other", id="the cookie of another install"),
        pytest.param(None, None, id="no state at all"),
        pytest.param("forged", "forged", id="a state Orion never issued, in cookie and link"),
        pytest.param("../../installations/-/TAAAA1/bot.json", "same", id="a path for a state"),
        pytest.param("A" * 43, "same", id="the shape of a state, never issued"),
    ],
)
def test_a_state_orion_did_not_issue_to_this_browser_is_refused(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path, state: str | None, cookie: str | None
) -> None:
    _, issued = start_install(orion)
    assert issued is not None
    sent = {"issued": issued, None: None}.get(state, state)
    cookie_sent = {"other": issued + "x", "same": sent, "forged": "forged", None: None}.get(
        cookie, cookie
    )
    code = slack.approve_install(TEAM)

    page = finish_install(orion, code=code, state=sent, cookie=cookie_sent)

    assert failed(page) and page.status_code in (400, 401)
    assert exchanges(slack) == 0
    assert stored(memory_dir) == []


def test_the_install_page_stores_nothing_however_often_it_is_asked_for(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    """Anyone may load the install page: 300 anonymous visits once wrote 300 objects (30
    here: one object written by any of them fails the test)."""
    states = {start_install(orion)[1] for _ in range(30)}
    assert None not in states and len(states) == 30
    kept = [p.relative_to(memory_dir).as_posix() for p in memory_dir.rglob("*") if p.is_file()]
    assert kept == [LAYOUT_MARKER]  # what any start keeps
    # Each still works, once, in the browser it was given to.
    state = next(iter(states))
    assert state is not None
    assert succeeded(
        finish_install(orion, code=slack.approve_install(TEAM), state=state, cookie=state)
    )


def test_an_expired_state_is_refused(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    # Signed by Orion (with the app's client secret), eleven minutes ago.
    secret = orion.settings.slack_client_secret
    assert secret is not None
    state = signed_state(secret.get_secret_value().encode(), int(time.time()) - 660, "n" * 22)

    page = finish_install(orion, code=slack.approve_install(TEAM), state=state, cookie=state)

    assert failed(page) and "invalid_state" in page.text
    assert exchanges(slack) == 0 and stored(memory_dir) == []


@pytest.mark.parametrize(
    "code",
    ["not-a-code", "x" * 5000, "../../installations/-/TAAAA1/bot.json", "code\r\nSet-Cookie: a=b"],
)
def test_a_hostile_code_is_refused_and_stores_nothing(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path, code: str
) -> None:
    _, state = start_install(orion)
    page = finish_install(orion, code=code, state=state, cookie=state)

    assert failed(page) and "invalid_code" in page.text
    assert "Set-Cookie: a=b" not in page.text and "a=b" not in page.headers.get("set-cookie", "")
    assert stored(memory_dir) == []
    # Only a code of Slack's shape is sent to Slack; none is ever logged.
    assert exchanges(slack) == (1 if code == "not-a-code" else 0)
    assert code not in json.dumps(orion.log_lines())
    # The state was spent: the same page cannot be used again.
    assert failed(
        finish_install(orion, code=slack.approve_install(TEAM), state=state, cookie=state)
    )


def test_slack_unreachable_when_the_code_is_exchanged_is_a_failure_page(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    # Nothing listens on port 9 of loopback (discard): every connection is refused.
    settings = distribution_settings(
        slack, claude, memory_dir=memory_dir, slack_api_url="http://127.0.0.1:9/api/"
    )
    with OrionServer(settings) as orion:
        _, state = start_install(orion)
        page = finish_install(orion, code="1234.5678.abcdef", state=state, cookie=state)

        assert failed(page) and "slack_unreachable" in page.text and page.status_code == 502
        assert "Traceback" not in page.text
        assert stored(memory_dir) == []
        [line] = orion.logged("slack.oauth.install_failed")
        assert line["reason"] == "slack_unreachable" and "1234.5678" not in json.dumps(line)


def test_slack_refusing_the_apps_credentials_is_a_failure_page(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    slack.accept_client("1111.2222", "a-rotated-secret")  # Orion still has the old one
    page = install(orion, slack, TEAM)
    assert failed(page) and "invalid_code" in page.text
    assert stored(memory_dir) == []


# --- storage slow or down, several instances ----------------------------------------------


def test_storage_down_during_an_install_is_a_clear_failure_and_a_retry_works(
    distribution_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    slack: FakeSlack,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
) -> None:
    orion = distribution_on_bucket()
    bucket = Bucket(gcs_emulator, gcs_bucket)
    outage = gcs_proxy.add_rule("", status=503)

    # The install page needs no storage (its state is signed, not stored)...
    page, state = start_install(orion)
    assert not failed(page) and state is not None

    # ...but Slack's redirect does: the state cannot be spent, nothing is exchanged.
    page = finish_install(orion, code=slack.approve_install(TEAM), state=state, cookie=state)
    assert failed(page) and page.status_code == 503
    assert exchanges(slack) == 0
    assert not [name for name in bucket.names() if name.startswith("installations/")]

    gcs_proxy.clear_rules()
    assert outage.hits > 0
    assert succeeded(install(orion, slack, TEAM))
    assert f"installations/-/{TEAM}/bot.json" in bucket.names()
    assert "Traceback" not in page.text
    lines = orion.logged("slack.oauth.install_failed")
    assert lines and all(line["reason"] == "storage_error" for line in lines)


def test_storage_failing_only_when_the_installation_is_saved_is_a_failure_page(
    distribution_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    slack: FakeSlack,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
) -> None:
    orion = distribution_on_bucket()
    _, state = start_install(orion)
    gcs_proxy.add_rule("installations", status=503)

    page = finish_install(orion, code=slack.approve_install(TEAM), state=state, cookie=state)

    assert failed(page) and "storage_error" in page.text
    gcs_proxy.clear_rules()
    assert succeeded(install(orion, slack, TEAM)), "a retry from the install page works"


def test_two_instances_finishing_the_same_install_both_succeed(
    distribution_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    slack: FakeSlack,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
) -> None:
    first, second = distribution_on_bucket(), distribution_on_bucket()
    starts = [start_install(server) for server in (first, second)]
    codes = [slack.approve_install(TEAM) for _ in starts]
    # Both instances write the installation at the same moment: slow writes overlap.
    gcs_proxy.add_rule("installations", delay=0.3, method="POST")
    pages: list[object] = [None, None]

    def finish(i: int, server: OrionServer) -> None:
        state = starts[i][1]
        pages[i] = finish_install(server, code=codes[i], state=state, cookie=state)

    threads = [threading.Thread(target=finish, args=(i, s)) for i, s in enumerate((first, second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert all(succeeded(page) for page in pages)  # type: ignore[arg-type]
    bucket = Bucket(gcs_emulator, gcs_bucket)
    bot = json.loads(bucket.read(f"installations/-/{TEAM}/bot.json") or "{}")
    installation = json.loads(bucket.read(f"installations/-/{TEAM}/installation.json") or "{}")
    assert "bot_token" not in installation, "the token is kept in one object only"
    assert bot["bot_token"] in slack.issued_tokens(TEAM)
