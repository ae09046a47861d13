"""Every failure Orion survives is visible: one log line, with the traceback and the trace id.

Each case forces one failure on a path that catches an exception and carries on (issue
18, item 1), end to end: the real Orion HTTP app on loopback, failures injected through the
fakes (the GCS fault proxy answering 403 on one object, FakeSlack refusing a call, FakeClaude
failing), or through what is stored (a memory Orion cannot render). It then waits until the
event has been handled to its end (its `.done` line) and everything it started has finished
(`wait_idle`), and asserts that the whole log holds exactly one line with an `exception`
field: the expected one, with a traceback, at WARNING when the person still got what they
asked for and at ERROR when they did not, carrying the event's trace id. Start-up work
belongs to no event: its line carries no trace id. The exception's text never reaches the
person or Claude.

A 403 is what these faults use: an error answer GCS gives at once, which neither the client
library's retries nor the store's breaker act on, so exactly one operation fails.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.learning.recall import COULD_NOT_SEARCH
from app.memory.homes import person, preferences_key
from app.memory.scopes import global_context_key
from app.observability.logging import trace_id_for
from app.slack.conversation.greeting import GENERIC_GREETING
from tests import layout, log_events
from tests.e2e import conversation
from tests.e2e.memory_bucket import Bucket
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.claude_script import ScriptItem, text
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings

USER, CHANNEL = "U0OPAL", "D0OPAL"
# What the fault proxy answers (tests/fakes/fault_proxy.py): in the log, never in Slack.
INJECTED = "Injected error 403"
# Long enough to be summarised at turn end (app/learning/transcript.py).
QUESTION = "Which regions does the payments service run in, and where does it fail over to?"
ANSWER = "Payments runs in europe-west1 and fails over to europe-west4; the drill is monthly."

Start = Callable[..., OrionServer]


# --- what the log says -----------------------------------------------------------------------


def tracebacks(orion: OrionServer) -> list[dict[str, Any]]:
    """Every log line that carries an exception, in order."""
    return [line for line in orion.log_lines() if line.get("exception")]


def the_one_traceback(
    orion: OrionServer, message: str, severity: str | None = None
) -> dict[str, Any]:
    """The only log line with an exception, which must be `message` (at `severity`)."""
    records = tracebacks(orion)
    assert [r["message"] for r in records] == [message], records
    [record] = records
    if severity is not None:
        assert record["severity"] == severity
    assert record["exception"].startswith("Traceback (most recent call last):")
    return record


def of_event(record: dict[str, Any], payload: dict[str, Any]) -> None:
    """The line carries the event's ids (its trace id is derived from Slack's event id)."""
    assert record.get("trace_id") == trace_id_for(payload["event_id"])
    assert record.get("event_id") == payload["event_id"]


def finished_with(orion: OrionServer, payload: dict[str, Any]) -> None:
    """Wait until the event was handled to its end and nothing it started still runs."""
    orion.wait_handled(payload["event_id"], timeout=conversation.FIRST_EVENT_TIMEOUT)
    orion.wait_idle()


def never_shown(slack: FakeSlack, claude: FakeClaude, *texts: str) -> None:
    shown = [m.text or "" for m in slack.messages()]
    sent = json.dumps(claude.requests)
    for text_ in texts:
        assert not any(text_ in m for m in shown), f"{text_!r} reached Slack"
        assert text_ not in sent, f"{text_!r} reached Claude"


# --- what a person does ------------------------------------------------------------------------


def open_thread(orion: OrionServer, slack: FakeSlack, user: str = USER) -> dict[str, Any]:
    """Open an assistant thread; returns the event, once Orion has handled it."""
    thread_ts = slack.open_assistant_thread(CHANNEL)
    payload = events.assistant_thread_started(user, CHANNEL, thread_ts)
    assert orion.post_event(payload).status_code == 200
    finished_with(orion, payload)
    return payload


def thread_of(payload: dict[str, Any]) -> str:
    return str(payload["event"]["assistant_thread"]["thread_ts"])


def ask(
    orion: OrionServer, slack: FakeSlack, thread_ts: str, question: str = QUESTION
) -> dict[str, Any]:
    """The person writes in the thread; returns the event, once Orion has handled it."""
    payload = conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, question)
    finished_with(orion, payload)
    return payload


def answer_summaries(claude: FakeClaude, orion: OrionServer) -> None:
    """Answer the summary model on its own, so the main model's script is left alone."""
    model = orion.settings.summary_model

    def respond(body: dict[str, Any]) -> ScriptItem | None:
        return text("# Payments regions\nWhere payments runs.") if body["model"] == model else None

    claude.responder = respond


# --- a thread starts (app/slack/assistant_view.py, conversation/thread_memory.py,
# app/memory/loader.py) ---------------------------------------------------------------------


def test_a_memory_that_fails_to_load_at_thread_start_is_logged_once_and_the_greeting_comes(
    gcs_proxy: FaultyProxy, orion_on_bucket: Start, slack: FakeSlack, claude: FakeClaude
) -> None:
    orion = orion_on_bucket()
    gcs_proxy.add_rule(preferences_key(USER), status=403, method="GET")

    payload = open_thread(orion, slack)

    assert conversation.finished(slack, CHANNEL, thread_of(payload)) == [GENERIC_GREETING]
    record = the_one_traceback(orion, log_events.TOOL_MEMORY_LOAD_SCOPE_FAILED, "WARNING")
    of_event(record, payload)
    assert record["scope"] == "user" and INJECTED in record["exception"]
    never_shown(slack, claude, INJECTED)


def test_a_user_id_no_memory_is_kept_for_gets_the_generic_greeting_and_nothing_kept(
    gcs_proxy: FaultyProxy,
    orion_on_bucket: Start,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    orion = orion_on_bucket()
    # Not a user id memory may be kept for: no key is built from it.
    malformed = "U0not-a-user"

    payload = open_thread(orion, slack, user=malformed)

    assert conversation.finished(slack, CHANNEL, thread_of(payload)) == [GENERIC_GREETING]
    assert tracebacks(orion) == [], "nothing failed: there is nothing to keep"
    assert not [key for key in bucket.names() if malformed in key]
    never_shown(slack, claude, "not a Slack user id")


def test_a_greeting_slack_refuses_is_logged_once_as_an_error(
    gcs_proxy: FaultyProxy, orion_on_bucket: Start, slack: FakeSlack, claude: FakeClaude
) -> None:
    orion = orion_on_bucket()
    slack.inject_error("chat.postMessage", error="channel_not_found", status=200)

    payload = open_thread(orion, slack)

    assert slack.bot_messages(CHANNEL, thread_of(payload)) == []
    record = the_one_traceback(orion, log_events.SLACK_THREAD_STARTED_FAILED, "ERROR")
    of_event(record, payload)
    assert "channel_not_found" in record["exception"]


def test_a_record_the_store_refuses_is_logged_once_and_the_greeting_comes(
    gcs_proxy: FaultyProxy, orion_on_bucket: Start, slack: FakeSlack, claude: FakeClaude
) -> None:
    orion = orion_on_bucket()
    # The conversation's record, also the retry claim: the thread start's only upload.
    gcs_proxy.add_rule("ifGenerationMatch=0", status=403, method="POST", times=1)

    payload = open_thread(orion, slack)

    assert conversation.finished(slack, CHANNEL, thread_of(payload)) == [GENERIC_GREETING]
    record = the_one_traceback(orion, log_events.SLACK_CONVERSATION_RECORD_FAILED, "WARNING")
    of_event(record, payload)
    assert INJECTED in record["exception"]
    never_shown(slack, claude, INJECTED)


# --- a turn (app/agent/turn.py, app/learning/recall.py, app/slack/conversation/answering.py) ---


def test_a_memory_restore_that_fails_for_a_message_is_logged_once_and_the_answer_comes(
    gcs_proxy: FaultyProxy, orion_on_bucket: Start, slack: FakeSlack, claude: FakeClaude
) -> None:
    orion = orion_on_bucket()
    # A thread with no thread start seen: the turn restores the memory.
    thread_ts = slack.new_ts()
    gcs_proxy.add_rule(global_context_key(), status=403, method="GET")
    claude.reply("Here you go.")

    payload = ask(orion, slack, thread_ts, "What's new?")

    assert conversation.finished(slack, CHANNEL, thread_ts) == ["Here you go."]
    record = the_one_traceback(orion, log_events.TOOL_MEMORY_LOAD_SCOPE_FAILED, "WARNING")
    of_event(record, payload)
    assert record["scope"] == "global" and INJECTED in record["exception"]
    never_shown(slack, claude, INJECTED)


def test_a_preferences_file_nested_past_pythons_limit_holds_no_preferences_and_is_logged(
    gcs_proxy: FaultyProxy,
    orion_on_bucket: Start,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    """A file no JSON parser can read (nested deeper than Python's recursion limit) holds
    no preferences, for Claude as for the person's Home tab (one rule for every reader):
    no failure, the answer comes, and the log says which file and why."""
    orion = orion_on_bucket()
    depth = 5_000
    bucket.write(preferences_key(USER), '{"name": ' + "[" * depth + "]" * depth + "}")
    thread_ts = slack.new_ts()
    claude.reply("Here you go.")

    payload = ask(orion, slack, thread_ts, "What's new?")

    assert conversation.finished(slack, CHANNEL, thread_ts) == ["Here you go."]
    record = the_one_traceback(orion, log_events.MEMORY_FILE_UNREADABLE, "WARNING")
    of_event(record, payload)
    assert record["file"] == "preferences" and record["reason"] == "RecursionError"
    [request] = conversation.main_requests(claude, orion)
    assert "[[[" not in conversation.system_text(request)


def test_a_preference_that_cannot_be_saved_is_logged_once_and_the_answer_comes(
    gcs_proxy: FaultyProxy,
    orion_on_bucket: Start,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    orion = orion_on_bucket()
    # Her preferences as the turn reads them; saving the new one over them cannot (an
    # upload names its object in its body: the version it replaces is in the URL).
    generation = bucket.write(preferences_key(USER), '{"timezone": "Europe/Paris"}')
    thread_ts = thread_of(open_thread(orion, slack))
    gcs_proxy.add_rule(f"ifGenerationMatch={generation}", status=403, method="POST")
    claude.reply("Noted, Sam.")

    payload = ask(orion, slack, thread_ts, "Please call me Sam.")

    assert conversation.answers(slack, CHANNEL, thread_ts) == ["Noted, Sam."]
    record = the_one_traceback(orion, log_events.MEMORY_PREFERENCES_WRITE_FAILED, "WARNING")
    of_event(record, payload)
    assert record["keys"] == ["name"] and INJECTED in record["exception"]
    never_shown(slack, claude, INJECTED)


def test_a_summary_that_cannot_be_written_is_logged_once_and_the_answer_comes(
    gcs_proxy: FaultyProxy,
    orion_on_bucket: Start,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    orion = orion_on_bucket()
    answer_summaries(claude, orion)
    # Her profile as the turn reads it (once the thread start has settled, writing it
    # back); the turn end cannot write the summary into it.
    bucket.write(person(USER).profile_key, layout.profile())
    thread_ts = thread_of(open_thread(orion, slack))
    orion.wait_idle()
    generation = bucket.generations()[person(USER).profile_key]
    gcs_proxy.add_rule(f"ifGenerationMatch={generation}", status=403, method="POST")
    claude.reply(ANSWER)

    payload = ask(orion, slack, thread_ts)

    assert conversation.answers(slack, CHANNEL, thread_ts) == [ANSWER]
    record = the_one_traceback(orion, log_events.MEMORY_AFTER_TURN_FAILED, "WARNING")
    of_event(record, payload)
    assert INJECTED in record["exception"]
    never_shown(slack, claude, INJECTED)


def test_a_past_summary_recall_cannot_read_is_logged_once_and_the_answer_comes(
    gcs_proxy: FaultyProxy,
    orion_on_bucket: Start,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    orion = orion_on_bucket()
    # Within the retention window: older entries of Orion's index are not searched at all.
    past, updated = "1712345000.000100", datetime.now(UTC).replace(microsecond=0)
    record = layout.conversation_record(
        USER,
        past,
        channel_id=CHANNEL,
        summary="Cloud spend is over plan.",
        title="Q3 budget",
        at=updated,
    )
    for key, content in layout.history([record]).items():
        bucket.write(key, content)
    thread_ts = thread_of(open_thread(orion, slack))
    gcs_proxy.add_rule(layout.conversation_key(USER, past), status=403, method="GET")
    claude.reply_tool_use("recall", {"query": "Q3 budget"})
    claude.reply("I could not find it.")

    payload = ask(orion, slack, thread_ts, "What did we say about the Q3 budget?")

    assert conversation.answers(slack, CHANNEL, thread_ts) == ["I could not find it."]
    record = the_one_traceback(orion, log_events.TOOL_RECALL_READ_FAILED, "WARNING")
    of_event(record, payload)
    assert INJECTED in record["exception"]
    # Claude is told the search could not be made, not that nothing was found.
    [result] = conversation.tool_results(conversation.main_requests(claude, orion)[-1])
    assert result.get("is_error") and conversation.result_text(result) == COULD_NOT_SEARCH
    never_shown(slack, claude, INJECTED)


def test_an_answer_that_fails_is_logged_once_as_an_error(
    gcs_proxy: FaultyProxy, orion_on_bucket: Start, slack: FakeSlack, claude: FakeClaude
) -> None:
    orion = orion_on_bucket()
    thread_ts = thread_of(open_thread(orion, slack))
    claude.fail(status=529, error_type="overloaded_error", message="Overloaded (opal-7)")

    payload = ask(orion, slack, thread_ts, "Are you there?")

    [apology] = conversation.answers(slack, CHANNEL, thread_ts)
    assert "Sorry" in apology
    record = the_one_traceback(orion, log_events.SLACK_USER_MESSAGE_FAILED, "ERROR")
    of_event(record, payload)
    assert "opal-7" in record["exception"]
    never_shown(slack, claude, "opal-7", "overloaded_error")


# --- start-up (app/services.py): no event, so no trace id ---------------------------------------


def test_a_storage_check_that_fails_at_start_is_logged_once(
    gcs_proxy: FaultyProxy, gcs_bucket: str, slack: FakeSlack, claude: FakeClaude
) -> None:
    gcs_proxy.add_rule("health/probe", status=403, method="GET")
    settings = make_settings(slack, claude, gcs_memories_bucket=gcs_bucket)
    with OrionServer(settings, started_as_deployed=True) as orion:
        # Asked before the server listens: the line is there once it does.
        record = the_one_traceback(orion, log_events.STORAGE_CHECK_FAILED, "WARNING")
    assert "trace_id" not in record and INJECTED in record["exception"]


def test_a_store_that_cannot_connect_at_start_is_logged_once(
    slack: FakeSlack,
    claude: FakeClaude,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Production's GCS client, with credentials that cannot be found.
    monkeypatch.delenv("STORAGE_EMULATOR_HOST", raising=False)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing-key.json"))
    settings = make_settings(slack, claude, gcs_memories_bucket="orion-test-no-credentials")
    with OrionServer(settings, started_as_deployed=True) as orion:
        records = tracebacks(orion)
    # Without credentials nothing can be sent: the connection's failure opens the store's
    # breaker, which says so once; the start-up check then finds it open and says nothing.
    assert [(r["message"], r["severity"]) for r in records] == [
        (log_events.STORE_UNAVAILABLE, "ERROR")
    ]
    for record in records:
        assert "trace_id" not in record
        assert record["exception"].startswith("Traceback (most recent call last):")
        assert "missing-key.json" in record["exception"]
