"""A message waits for this process's write of its conversation's last exchange (a4ff8e8,
app/slack/conversation/running_turns.py): played as an attacker would, end to end (the
real Orion HTTP app, fake Slack and Claude, the GCS emulator behind the fault proxy).

- A write that never lands holds the next message no longer than half its memory budget:
  it is answered while the write is still held, with the person's memory and the
  conversation as kept so far (it waited the whole budget, and went out with no memory at
  all); once the write lands, both exchanges are kept.
- One person's slow write delays no one else — not even a thread whose ts is the same in
  another person's DM (ts are unique per channel only) — and hands them nothing: their
  answer comes while the write is held, with their own memory and none of the other's
  exchange.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.memory.homes import person, preferences_key
from tests import layout
from tests.e2e.conversation import main_requests, post_user_message, remembered, wait_for_answer
from tests.e2e.memory_bucket import Bucket
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, last_user_text, message_text
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

ANA, ANA_DM = "U0ANA0001", "D0ANA0001"
BEN, BEN_DM = "U0BEN0001", "D0BEN0001"
SECRET_QUESTION = "Where is the surprise party for Ben?"
SECRET_ANSWER = "At the boathouse, Friday at seven."


def _answering(claude: FakeClaude, orion: OrionServer, answers: dict[str, str]) -> None:
    def respond(body: dict[str, Any]) -> script.ScriptItem | None:
        if body["model"] == orion.settings.summary_model:
            return script.text("# A conversation\nNothing of note.")
        answer = answers.get(last_user_text(body))
        return script.text(answer) if answer is not None else None

    claude.responder = respond


def _open(orion: OrionServer, slack: FakeSlack, user: str, dm: str, ts: str | None = None) -> str:
    """An assistant thread opened in `dm` (at `ts`, when given), once greeted."""
    ts = slack.open_assistant_thread(dm, ts)
    assert orion.post_event(events.assistant_thread_started(user, dm, ts)).status_code == 200
    slack.wait_for(lambda: slack.bot_messages(dm, ts), what="the greeting")
    return ts


def _hold_the_exchange_write(
    gcs_proxy: FaultyProxy, bucket: Bucket, orion: OrionServer, slack: FakeSlack, thread: str
) -> Any:
    """Ana asks; her answer shows, and the write of that exchange is held in the proxy."""
    record = person(ANA).conversation_key(thread)
    saving = gcs_proxy.add_rule(
        f"ifGenerationMatch={bucket.generations()[record]}", hold=True, method="POST"
    )
    post_user_message(orion, slack, ANA, ANA_DM, thread, SECRET_QUESTION)
    wait_for_answer(slack, ANA_DM, thread, SECRET_ANSWER)
    slack.wait_for(lambda: saving.hits, what="the exchange's write under way")
    return saving


def test_a_write_that_never_lands_holds_the_next_message_no_longer_than_its_budget(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(preferences_key(ANA), '{"name": "Ana"}')
    orion = orion_on_bucket()
    _answering(claude, orion, {SECRET_QUESTION: SECRET_ANSWER, "And the cake?": "Lemon."})
    thread = _open(orion, slack, ANA, ANA_DM)
    orion.wait_idle()
    saving = _hold_the_exchange_write(gcs_proxy, bucket, orion, slack, thread)

    post_user_message(orion, slack, ANA, ANA_DM, thread, "And the cake?")
    wait_for_answer(slack, ANA_DM, thread, "Lemon.")
    assert saving.held is not None and not saving.held.is_set(), "the write is still held"
    # With her memory, and the conversation as it is kept so far.
    [request] = [r for r in main_requests(claude, orion) if "And the cake?" in str(r)]
    assert "Ana" in remembered(request)
    assert [message_text(m) for m in request["messages"]] == ["And the cake?"]
    saving.release()
    orion.wait_idle()
    kept = layout.messages_in(bucket.read(person(ANA).conversation_key(thread)))
    assert sorted(kept) == sorted([SECRET_QUESTION, SECRET_ANSWER, "And the cake?", "Lemon."])


def test_a_slow_write_delays_no_one_else_and_hands_them_nothing(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(preferences_key(BEN), '{"name": "Ben"}')
    orion = orion_on_bucket()
    _answering(claude, orion, {SECRET_QUESTION: SECRET_ANSWER, "What is my name?": "Ben."})
    anas = _open(orion, slack, ANA, ANA_DM)
    orion.wait_idle()
    saving = _hold_the_exchange_write(gcs_proxy, bucket, orion, slack, anas)

    # Ben, in his own DM, in a thread whose ts is the same as Ana's.
    bens = _open(orion, slack, BEN, BEN_DM, ts=anas)
    post_user_message(orion, slack, BEN, BEN_DM, bens, "What is my name?")
    wait_for_answer(slack, BEN_DM, bens, "Ben.")
    assert saving.held is not None and not saving.held.is_set(), "Ana's write is still held"

    [request] = [r for r in main_requests(claude, orion) if "What is my name?" in str(r)]
    assert "Ben" in remembered(request), "with his own memory"
    assert [message_text(m) for m in request["messages"]] == ["What is my name?"]
    assert "boathouse" not in str(request) and "surprise" not in str(request)
    saving.release()
    orion.wait_idle()
