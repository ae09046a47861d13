"""In a burst on one core, what people wait for comes first: a turn's end and a thread
start's settle (work nobody waits for) wait while someone still waits for a greeting or for
their turn to reach Claude, at most `DEFER_AT_MOST_S` (app/runtime/waiting.py).

End to end: Orion over HTTP, the fake Slack and Claude, the GCS emulator behind a proxy that
holds one person's read, so that they wait for as long as the test says. What is asserted
is what is in the bucket (through the proxy's log of writes) and in the threads."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from app.memory.homes import person
from app.runtime import waiting
from tests.e2e import conversation
from tests.e2e.conversation import open_thread
from tests.fakes import slack_events as events
from tests.fakes._waiting import wait_until
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.claude_script import ScriptItem, text
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, orion_servers

SAM, SAM_DM = "U0SAMF", "D0SAMF"
BOB, BOB_DM = "U0BOBF", "D0BOBF"
# Long enough to be learned from (a turn end indexes and summarises it).
SAMS_QUESTION = "Sam here. Please book the big meeting room for Thursday's planning session."
SAMS_ANSWER = "Done, Sam: the big meeting room is yours on Thursday from ten to noon."
BOBS_QUESTION = "Bob here. What is on my plate today, and which of it can wait until Monday?"
BOBS_ANSWER = "Bob, here you are: the budget review first; the vendor calls can wait."
# Long enough for a write that did not wait to have been made (it takes milliseconds).
ROOM_S = 1.0


@pytest.fixture
def orion(
    slack: FakeSlack, claude: FakeClaude, gcs_proxy: FaultyProxy, gcs_bucket: str
) -> Iterator[OrionServer]:
    # Bob waits on his held read for as long as the test holds it, not the 2 s budget.
    with orion_servers(slack, claude, gcs_memories_bucket=gcs_bucket) as start:
        server = start(memory_load_timeout_s=30)
        claude.responder = _answers(server)
        yield server


def _answers(orion: OrionServer) -> Callable[[dict[str, Any]], ScriptItem]:
    """Each person's answer names them; summaries are answered as summaries."""

    def respond(body: dict[str, Any]) -> ScriptItem:
        if body["model"] == orion.settings.summary_model:
            return text("# Plans\nTalked about the day's plans.")
        return text(BOBS_ANSWER if "Bob" in last_user_text(body) else SAMS_ANSWER)

    return respond


def _writes(proxy: FaultyProxy, key: str) -> int:
    return sum(r.method == "POST" and r.upload_name == key for r in proxy.requests)


def _written(proxy: FaultyProxy, key: str) -> bool:
    return _writes(proxy, key) > 0


def _held(proxy: FaultyProxy) -> None:
    wait_until(lambda: proxy.in_flight > 0, what="the held read at the proxy")


def test_a_turn_end_waits_until_the_person_still_waiting_has_reached_claude(
    orion: OrionServer,
    slack: FakeSlack,
    gcs_proxy: FaultyProxy,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(waiting, "DEFER_AT_MOST_S", 60.0)
    sam_ts, _ = open_thread(orion, slack, SAM, SAM_DM)
    bob_ts, _ = open_thread(orion, slack, BOB, BOB_DM)
    orion.wait_idle()  # the thread starts settled
    bobs_read = gcs_proxy.hold(person(BOB).profile_key, method="GET")
    conversation.post_user_message(orion, slack, BOB, BOB_DM, bob_ts, BOBS_QUESTION)
    _held(gcs_proxy)

    conversation.post_user_message(orion, slack, SAM, SAM_DM, sam_ts, SAMS_QUESTION)
    conversation.wait_for_answer(slack, SAM_DM, sam_ts, SAMS_ANSWER)
    time.sleep(ROOM_S)
    assert not _written(gcs_proxy, person(SAM).search_key), "wrote while Bob waited"

    bobs_read.set()
    conversation.wait_for_answer(slack, BOB_DM, bob_ts, BOBS_ANSWER)
    wait_until(lambda: _written(gcs_proxy, person(SAM).search_key), what="Sam's turn end")
    orion.wait_idle()


def test_a_turn_end_waits_no_longer_than_its_bound_for_someone_kept_waiting(
    orion: OrionServer,
    slack: FakeSlack,
    gcs_proxy: FaultyProxy,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(waiting, "DEFER_AT_MOST_S", 0.2)
    sam_ts, _ = open_thread(orion, slack, SAM, SAM_DM)
    bob_ts, _ = open_thread(orion, slack, BOB, BOB_DM)
    orion.wait_idle()  # the thread starts settled
    bobs_read = gcs_proxy.hold(person(BOB).profile_key, method="GET")
    conversation.post_user_message(orion, slack, BOB, BOB_DM, bob_ts, BOBS_QUESTION)
    _held(gcs_proxy)

    conversation.post_user_message(orion, slack, SAM, SAM_DM, sam_ts, SAMS_QUESTION)
    conversation.wait_for_answer(slack, SAM_DM, sam_ts, SAMS_ANSWER)
    wait_until(lambda: _written(gcs_proxy, person(SAM).search_key), what="Sam's turn end")
    assert conversation.answers(slack, BOB_DM, bob_ts) == [], "Bob was not kept waiting"

    bobs_read.set()
    conversation.wait_for_answer(slack, BOB_DM, bob_ts, BOBS_ANSWER)
    orion.wait_idle()


def test_a_thread_start_settles_once_the_greeting_someone_waits_for_is_shown(
    orion: OrionServer,
    slack: FakeSlack,
    gcs_proxy: FaultyProxy,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(waiting, "DEFER_AT_MOST_S", 60.0)
    # Sam is known: her profile lists her conversations, and each thread start settles it.
    first_ts, _ = open_thread(orion, slack, SAM, SAM_DM)
    conversation.post_user_message(orion, slack, SAM, SAM_DM, first_ts, SAMS_QUESTION)
    conversation.wait_for_answer(slack, SAM_DM, first_ts, SAMS_ANSWER)
    orion.wait_idle()
    assert _written(gcs_proxy, person(SAM).profile_key)
    writes_before = _writes(gcs_proxy, person(SAM).profile_key)

    bobs_read = gcs_proxy.hold(person(BOB).profile_key, method="GET")
    bob_ts = slack.open_assistant_thread(BOB_DM)
    assert orion.post_event(events.assistant_thread_started(BOB, BOB_DM, bob_ts)).status_code == 200
    _held(gcs_proxy)

    # Sam is greeted while Bob's greeting waits on storage; her thread start's own save
    # waits for his.
    open_thread(orion, slack, SAM, SAM_DM)
    time.sleep(ROOM_S)
    assert _writes(gcs_proxy, person(SAM).profile_key) == writes_before, "settled while Bob waited"

    bobs_read.set()
    slack.wait_for(lambda: slack.bot_messages(BOB_DM, bob_ts), what="Bob's greeting")
    wait_until(
        lambda: _writes(gcs_proxy, person(SAM).profile_key) > writes_before, what="Sam's settle"
    )
    orion.wait_idle()
