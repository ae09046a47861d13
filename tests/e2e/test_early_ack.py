"""Events that arrive while Bolt is still loading (a cold start) are acked and answered."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings

USER, CHANNEL = "U0HEIDI", "D0HEIDI"


@pytest.fixture
def gate() -> threading.Event:
    return threading.Event()


@pytest.fixture
def loading_orion(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path, gate: threading.Event
) -> Iterator[OrionServer]:
    settings = make_settings(slack, claude, memory_dir=memory_dir)
    with OrionServer(settings, bolt_gate=gate) as server:
        yield server
        gate.set()


def test_an_event_during_loading_is_acked_at_once_and_handled_when_bolt_is_ready(
    loading_orion: OrionServer, slack: FakeSlack, gate: threading.Event
) -> None:
    thread_ts = slack.new_ts()
    response = loading_orion.post_event(events.assistant_thread_started(USER, CHANNEL, thread_ts))
    assert response.status_code == 200 and response.content == b""
    assert loading_orion.app.state.bolt.app is None, "acked before Bolt was ready"
    assert loading_orion.http.get("/healthz").status_code == 200

    bolt_allowed_at = time.monotonic()
    gate.set()
    greeting = slack.wait_for(lambda: slack.bot_messages(CHANNEL, thread_ts), what="greeting")
    assert "Orion" in greeting[0].text
    # Nothing reached Slack while Bolt was loading: every call Orion made (the fake notes
    # when it answered each) came after Bolt was let go.
    assert slack.calls and all(call.at > bolt_allowed_at for call in slack.calls)


def test_a_forged_event_during_loading_is_rejected(
    loading_orion: OrionServer, slack: FakeSlack, gate: threading.Event
) -> None:
    thread_ts = slack.new_ts()
    payload = events.assistant_thread_started(USER, CHANNEL, thread_ts)
    assert loading_orion.post_event(payload, secret="forged").status_code == 401
    stale = int(time.time()) - 600
    assert loading_orion.post_event(payload, timestamp=stale).status_code == 401
    # A genuine event, acknowledged after them and handled once Bolt is loaded: had either
    # forged one been accepted, it would have been acknowledged first, held for Bolt the
    # same way, and counted in flight until its own end.
    genuine = events.assistant_thread_started(USER, CHANNEL, slack.new_ts())
    assert loading_orion.post_event(genuine).status_code == 200
    gate.set()
    loading_orion.wait_handled(genuine["event_id"])
    loading_orion.wait_idle()
    assert loading_orion.handled(payload["event_id"]) == []
    assert slack.bot_messages(CHANNEL, thread_ts) == []


def test_url_verification_during_loading_waits_for_bolt(
    loading_orion: OrionServer, gate: threading.Event
) -> None:
    threading.Timer(0.2, gate.set).start()
    response = loading_orion.post_event(events.url_verification("during-load"))
    assert response.json() == {"challenge": "during-load"}
