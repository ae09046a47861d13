"""A workspace that removes Orion is forgotten, and nothing of it comes back: its
installation (every token) and every object under its keys go, a turn still running for it
writes nothing back, a later event of it gets no Slack call, its Langfuse traces are
deleted — and every other workspace is untouched. Also: signed events whose workspace ids
are not Slack's shape."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.slack.oauth import uninstall
from tests import log_events
from tests.e2e.conversation import wait_for_answer
from tests.e2e.distribution import (
    distribution_settings,
    install,
    open_thread_in,
    say_in,
    stored_keys,
)
from tests.e2e.memory_bucket import Bucket
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.langfuse_api import FakeLangfuse
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer
from tests.span_log import SpanLog

TEAM_A, TEAM_B = "TAAAA1", "TBBBB2"
USER = "U0SAME01"
DM_A, DM_B = "DAAAA1", "DBBBB2"
FORGOTTEN = "slack.workspace.forgotten"
# The tombstone, and the mark that brings the erasure's second pass (no content of theirs).
UNINSTALL_MARKS = [f"uninstalls/-/{TEAM_A}", f"uninstalls/pending/-/{TEAM_A}"]


@pytest.fixture
def orion(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Iterator[OrionServer]:
    with OrionServer(distribution_settings(slack, claude, memory_dir=memory_dir)) as server:
        yield server


def remember_in(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, team: str, dm: str, name: str
) -> None:
    """A conversation in `team` in which its person gives their name: Orion keeps it."""

    def respond(body: dict[str, Any]) -> script.ScriptItem:
        if body["model"] == orion.settings.summary_model:
            return script.text(f"# Hello\n{name} said hello.\nWelcome: Hi again, {name}!")
        return script.text(f"Hello {name}!")

    claude.responder = respond
    before = len(orion.logged("memory.after_turn"))
    thread_ts, _ = open_thread_in(orion, slack, team, USER, dm)
    say_in(orion, slack, team, USER, dm, thread_ts, f"Please call me {name}.")
    wait_for_answer(slack, dm, thread_ts, f"Hello {name}!")
    slack.wait_for(lambda: len(orion.logged("memory.after_turn")) > before, timeout=30)
    orion.wait_idle()


def contents(memory_dir: Path) -> dict[str, str]:
    return {key: (memory_dir / key).read_text() for key in stored_keys(memory_dir)}


def of_team(keys: dict[str, str], team: str) -> dict[str, str]:
    return {key: text for key, text in keys.items() if f"/{team}/" in key or key.endswith(team)}


@pytest.mark.parametrize(
    "uninstalled",
    [
        pytest.param(lambda: events.app_uninstalled(TEAM_A), id="app_uninstalled"),
        pytest.param(lambda: events.tokens_revoked(TEAM_A, bot=["UBOT"]), id="tokens_revoked"),
    ],
)
def test_an_uninstall_erases_the_workspace_and_leaves_no_token(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    memory_dir: Path,
    uninstalled: Any,
) -> None:
    remember_in_both(orion, slack, claude)
    tokens_a = slack.issued_tokens(TEAM_A)
    before = contents(memory_dir)
    assert of_team(before, TEAM_A) and of_team(before, TEAM_B)
    assert any("Mira" in text for text in of_team(before, TEAM_A).values())

    slack.revoke_tokens_of(TEAM_A)  # as Slack does
    assert orion.post_event(uninstalled()).status_code == 200
    [line] = orion.wait_logged(FORGOTTEN)
    orion.wait_idle()

    after = contents(memory_dir)
    assert list(of_team(after, TEAM_A)) == UNINSTALL_MARKS, "only the marks of the uninstall"
    assert not [key for key, text in after.items() if "Mira" in text]
    assert not [key for key, text in after.items() if any(t in text for t in tokens_a)]
    assert of_team(after, TEAM_B) == of_team(before, TEAM_B), "workspace B is untouched"
    assert line["team_id"] == TEAM_A and line["objects"] >= 4


def remember_in_both(orion: OrionServer, slack: FakeSlack, claude: FakeClaude) -> None:
    """Workspaces A and B installed, and the same person remembered in each."""
    install(orion, slack, TEAM_A)
    install(orion, slack, TEAM_B)
    remember_in(orion, slack, claude, TEAM_A, DM_A, "Mira")
    remember_in(orion, slack, claude, TEAM_B, DM_B, "Otto")


@pytest.mark.parametrize(
    "ignores_filter",
    [
        pytest.param(False, id="langfuse"),
        # An older Langfuse lists every observation for a filter it does not know.
        pytest.param(True, id="a_langfuse_that_ignores_the_filter"),
    ],
)
def test_an_uninstall_deletes_the_workspaces_traces_and_only_its(
    spans: SpanLog,
    fake_langfuse: FakeLangfuse,
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    ignores_filter: bool,
) -> None:
    """Langfuse holds what was traced: the workspace's people's messages."""
    remember_in_both(orion, slack, claude)
    spans.send_to_langfuse()  # as Langfuse ingests them
    traced_a, traced_b = fake_langfuse.traces_of_team(TEAM_A), fake_langfuse.traces_of_team(TEAM_B)
    assert traced_a and traced_b and not traced_a & traced_b
    fake_langfuse.ignores_filter = ignores_filter

    slack.revoke_tokens_of(TEAM_A)
    assert orion.post_event(events.app_uninstalled(TEAM_A)).status_code == 200
    [forgotten] = orion.wait_logged(log_events.TRACING_FORGET_TEAM)

    assert fake_langfuse.traces_of_team(TEAM_A) == set()
    assert fake_langfuse.traces_of_team(TEAM_B) == traced_b, "workspace B's traces are kept"
    assert forgotten["traces"] == len(traced_a) and forgotten["team_id"] == TEAM_A
    kept = orion.logged(log_events.TRACING_FORGET_TEAM_NOT_THEIRS_KEPT)
    assert [line["severity"] for line in kept] == (["WARNING"] if ignores_filter else [])
    assert orion.logged(FORGOTTEN), "its storage was erased too"


def test_langfuse_unreachable_at_an_uninstall_still_erases_the_workspace_and_says_so(
    spans: SpanLog,
    fake_langfuse: FakeLangfuse,
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    memory_dir: Path,
) -> None:
    install(orion, slack, TEAM_A)
    remember_in(orion, slack, claude, TEAM_A, DM_A, "Mira")
    spans.send_to_langfuse()
    fake_langfuse.failing_status = 503

    slack.revoke_tokens_of(TEAM_A)
    assert orion.post_event(events.app_uninstalled(TEAM_A)).status_code == 200
    [failed] = orion.wait_logged(log_events.TRACING_FORGET_TEAM_FAILED, timeout=30)

    assert failed["severity"] == "WARNING"
    assert failed["exception"].startswith("Traceback (most recent call last):")
    assert orion.logged(FORGOTTEN)
    assert list(of_team(contents(memory_dir), TEAM_A)) == UNINSTALL_MARKS
    assert orion.http.get("/healthz").status_code == 200


def test_an_event_of_a_workspace_just_uninstalled_gets_no_slack_call_and_writes_nothing(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    install(orion, slack, TEAM_A)
    remember_in(orion, slack, claude, TEAM_A, DM_A, "Mira")
    orion.post_event(events.app_uninstalled(TEAM_A))
    orion.wait_logged(FORGOTTEN)
    orion.wait_idle()
    keys, calls = stored_keys(memory_dir), len(slack.calls)

    # Slack delivers an event sent just before the uninstall, and a click.
    thread_ts = slack.open_assistant_thread(DM_A)
    late = events.in_team(events.assistant_thread_started(USER, DM_A, thread_ts), TEAM_A)
    assert orion.post_event(late).status_code == 200
    home = events.in_team(events.app_home_opened(USER, DM_A, tab="home"), TEAM_A)
    assert orion.post_event(home).status_code == 200
    orion.wait_idle()

    assert len(slack.calls) == calls, [c.method for c in slack.calls[calls:]]
    assert stored_keys(memory_dir) == keys


@pytest.mark.parametrize(
    "answer_started",
    [
        pytest.param(True, id="uninstalled_while_answering"),
        # On a busy instance the message may find its installation, then wait while the
        # uninstall runs, and only then begin: it still counts as begun before.
        pytest.param(False, id="uninstalled_as_the_message_arrives"),
    ],
)
def test_a_turn_still_running_when_its_workspace_uninstalls_writes_nothing_back(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    memory_dir: Path,
    answer_started: bool,
) -> None:
    install(orion, slack, TEAM_A)
    install(orion, slack, TEAM_B)
    remember_in(orion, slack, claude, TEAM_B, DM_B, "Otto")
    claude.responder = None
    thread_ts, _ = open_thread_in(orion, slack, TEAM_A, USER, DM_A)
    # The answer's end (and so the turn's end — summary, index, the name it learned, the
    # note and its undo record) waits until after the uninstall.
    finishing = slack.hold("chat.stopStream")
    claude.reply("Noted, Mira.")
    say_in(orion, slack, TEAM_A, USER, DM_A, thread_ts, "Please call me Mira.")
    if answer_started:
        slack.wait_for(
            lambda: [c for c in slack.calls_to("chat.startStream") if c.args["channel"] == DM_A],
            what="the answer to start",
        )
    b_before = of_team(contents(memory_dir), TEAM_B)

    orion.post_event(events.app_uninstalled(TEAM_A))
    orion.wait_logged(FORGOTTEN)
    finishing.set()
    orion.wait_idle(timeout=30)
    # Whether the turn's end still tries a write after the uninstall (and has it taken back)
    # depends on timing: its work waits until nobody on the instance waits, and may find
    # the workspace gone first. Either way, what is left below is the property.
    taken_back = [line for line in orion.log_lines() if line.get("error") == "TenantUninstalled"]
    assert all(line["team_id"] == TEAM_A for line in taken_back)

    after = contents(memory_dir)
    assert list(of_team(after, TEAM_A)) == UNINSTALL_MARKS
    assert not [key for key, text in after.items() if "Mira" in text]
    assert of_team(after, TEAM_B) == b_before


def test_storage_down_as_the_workspace_uninstalls_is_tried_again_until_it_is_forgotten(
    distribution_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Slack sends app_uninstalled once: a storage outage then must not leave the
    workspace remembered (nor its token)."""
    monkeypatch.setattr(uninstall, "FORGET_RETRY_DELAYS_S", (0.2, 0.5, 1.0))
    orion = distribution_on_bucket()
    install(orion, slack, TEAM_A)
    remember_in(orion, slack, claude, TEAM_A, DM_A, "Mira")
    assert [name for name in bucket.names() if f"/{TEAM_A}/" in name]
    # Down for the tombstone's write (the first upload, after the token went): the
    # first attempt fails.
    outage = gcs_proxy.add_rule("uploadType=multipart", method="POST", status=503, times=1)

    orion.post_event(events.app_uninstalled(TEAM_A))
    orion.wait_logged(FORGOTTEN)
    orion.wait_idle()

    assert outage.hits >= 1 and orion.logged("slack.workspace.forget_failed")
    assert [name for name in bucket.names() if TEAM_A in name] == UNINSTALL_MARKS
    assert not orion.logged("slack.workspace.forget_abandoned")


def test_revoking_only_peoples_user_tokens_keeps_the_workspace(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    install(orion, slack, TEAM_A)
    remember_in(orion, slack, claude, TEAM_A, DM_A, "Mira")
    before = contents(memory_dir)

    orion.post_event(events.tokens_revoked(TEAM_A, oauth=[USER]))
    orion.wait_logged("slack.tokens_revoked.done")
    orion.wait_idle()

    assert contents(memory_dir) == before
    assert not orion.logged(FORGOTTEN)


@pytest.mark.parametrize(
    "team_id, enterprise_id",
    [
        ("../TAAAA1", None),
        ("TAAAA1/../TBBBB2", None),
        ("teams", None),
        (TEAM_A, "../EORG1"),
    ],
)
def test_a_signed_event_whose_workspace_ids_are_not_slacks_shape_reaches_nothing(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    memory_dir: Path,
    team_id: str,
    enterprise_id: str | None,
) -> None:
    install(orion, slack, TEAM_A)
    remember_in(orion, slack, claude, TEAM_A, DM_A, "Mira")
    keys, calls = contents(memory_dir), len(slack.calls)
    thread_ts = slack.open_assistant_thread(DM_A)
    for payload in (
        events.assistant_thread_started(USER, DM_A, thread_ts),
        events.app_home_opened(USER, DM_A, tab="home"),
        events.app_uninstalled(TEAM_A),
    ):
        hostile = events.in_team(payload, team_id, enterprise_id=enterprise_id)
        assert orion.post_event(hostile).status_code == 200
    orion.wait_idle()

    assert len(slack.calls) == calls, [c.method for c in slack.calls[calls:]]
    assert contents(memory_dir) == keys
    assert not orion.logged(FORGOTTEN)
