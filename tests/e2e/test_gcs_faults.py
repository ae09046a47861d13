"""GCS failing at each point of a conversation: the person is still answered, nothing is lost.

End to end through signed Slack events: the real Orion HTTP app on loopback, the fake Slack
and Claude, and the GCS emulator behind a FaultyProxy that answers 503s or stalls chosen
requests. Each case asserts what the person sees in the thread (never exception text or
storage addresses), what Claude is sent, what the logs say, and what ends up in the bucket.

GcsObjectStore retries a failing call for about ten seconds before it gives up: the cases
that must see it give up (the memory tool, the retry-dedupe claim) take that long; the
others use `times=`-limited faults, stalls beyond a small budget, or lift the fault once
the budget has run out.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from app.memory.homes import person, preferences_key
from app.slack.assistant_view import RESTORING_STATUS
from app.slack.conversation.greeting import GENERIC_GREETING
from tests import layout, log_events
from tests.e2e import conversation
from tests.e2e.conversation import (
    main_requests,
    remembered,
    result_text,
    tool_results,
)
from tests.e2e.memory_bucket import GLOBAL_KEY, Bucket
from tests.fakes import claude_script as script
from tests.fakes.anthropic_api import FakeClaude, last_user_text, message_text
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, CHANNEL = "U0GAIL", "D0GAIL"
PREFERENCES = {"name": "Gail", "response_style": "short answers"}
GLOBAL_CONTEXT = "Kestrel Labs ships on Thursdays. The staging cluster is called heron."
PREFERENCES_KEY = preferences_key(USER)
HOME = person(USER)
# Longer than GcsObjectStore's retry budget (about 10 s), for waits that outlast it.
PAST_RETRY_BUDGET = 25.0
# What must never reach the person (or, through a tool result, Claude): exception text,
# class names, status codes and storage addresses.
LEAKS = re.compile(
    r"Traceback|Exception|Error\b|[A-Z]\w*Error|StoreUnavailable|ServiceUnavailable"
    r"|\b503\b|127\.0\.0\.1|https?://|storage/v1|googleapis|orion-test-"
)


# --- fixtures -------------------------------------------------------------------------------


# --- what a person does, and what they see --------------------------------------------------


def open_thread(orion: OrionServer, slack: FakeSlack) -> tuple[str, str]:
    """Open an assistant thread; returns its ts and Orion's greeting."""
    return conversation.open_thread(orion, slack, USER, CHANNEL)


def send(orion: OrionServer, slack: FakeSlack, thread_ts: str, text: str) -> dict[str, Any]:
    """The person writes in the thread; returns the event as delivered (to deliver again)."""
    return conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, text)


def replies(slack: FakeSlack, thread_ts: str) -> list[str]:
    """Orion's finished messages in the thread, oldest first (the greeting included)."""
    return conversation.finished(slack, CHANNEL, thread_ts)


def wait_reply(
    slack: FakeSlack, thread_ts: str, text: str, timeout: float = conversation.FIRST_EVENT_TIMEOUT
) -> None:
    conversation.wait_for_answer(slack, CHANNEL, thread_ts, text, timeout)


def ask(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    thread_ts: str,
    question: str,
    answer: str,
) -> dict[str, Any]:
    """Claude answers `question` with `answer`; the person asks it and sees the answer.

    Returns the request Claude answered.
    """
    answer_questions(claude, orion, {question: answer})
    send(orion, slack, thread_ts, question)
    wait_reply(slack, thread_ts, answer)
    return request_for(claude, orion, question)


def assert_thread_is_clean(slack: FakeSlack, thread_ts: str, *addresses: str) -> None:
    """Nothing the person can see carries exception text or where the memories live."""
    seen = [
        *(m.text for m in slack.bot_messages(CHANNEL, thread_ts)),
        *(json.dumps(m.blocks) for m in slack.bot_messages(CHANNEL, thread_ts)),
        *(update.status for update in slack.statuses(CHANNEL, thread_ts)),
    ]
    for text in seen:
        assert not LEAKS.search(text), text
        assert not any(address in text for address in addresses), text
    assert not [m for m in slack.bot_messages(CHANNEL, thread_ts) if m.streaming]


# --- what Claude is sent --------------------------------------------------------------------


def request_for(claude: FakeClaude, orion: OrionServer, text: str) -> dict[str, Any]:
    """The first answering request whose latest user text is `text`."""
    return next(r for r in main_requests(claude, orion) if last_user_text(r) == text)


def answer_questions(
    claude: FakeClaude, orion: OrionServer, answers: dict[str, str], summary: str = ""
) -> None:
    """Claude answers each question with its answer, and summary requests with `summary`."""

    def respond(body: dict[str, Any]) -> script.ScriptItem | None:
        if body["model"] == orion.settings.summary_model:
            return script.text(summary or "# Conversation with Gail\nNothing of note.")
        answer = answers.get(last_user_text(body))
        return script.text(answer) if answer is not None else None

    claude.responder = respond


# --- what the logs say ------------------------------------------------------------------------


def assert_logs_are_clean(orion: OrionServer) -> None:
    """Failures are one structured line each: never a traceback in place of a message, and
    a traceback only with a warning or an error that reports a failure Orion survived."""
    for line in orion.log_lines():
        assert "Traceback" not in line["message"], line
        if "exception" in line:
            assert line["severity"] in ("WARNING", "ERROR"), line


# --- 1. every read fails while the thread starts ---------------------------------------------


def test_503_on_every_read_at_thread_start_still_greets_and_stays_healthy(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(PREFERENCES_KEY, json.dumps(PREFERENCES))
    bucket.write(GLOBAL_KEY, GLOBAL_CONTEXT)
    orion = orion_on_bucket(memory_load_timeout_s=0.5)
    reads = gcs_proxy.add_rule("/download/", status=503, method="GET")

    thread_ts, greeting = open_thread(orion, slack)

    # The person is greeted, generically: the restore was cut off, not the conversation.
    assert greeting == GENERIC_GREETING
    assert slack.statuses(CHANNEL, thread_ts)[0].status == RESTORING_STATUS
    assert slack.wait_for(lambda: slack.suggested_prompts(CHANNEL, thread_ts))[-1].prompts
    assert reads.hits >= 2, "each scope's download was refused (and retried)"
    # Retried within the budget, then given up (or cut off by the budget: whichever first).
    gave_up, cut_off = log_events.TOOL_MEMORY_LOAD_FAILED, log_events.TOOL_MEMORY_LOAD_TIMEOUT
    [load] = orion.logged(gave_up) + orion.logged(cut_off)
    assert load["severity"] == "WARNING"
    # Every scope read failed (a thread that has just opened has no conversation to read,
    # and the greeting needs no organisation context).
    assert sorted(load["failed"] + load["timed_out"]) == ["profile", "user"]
    assert load["found"] == [] and load["thread_ts"] == thread_ts
    assert not orion.logged(log_events.SLACK_THREAD_STARTED_FAILED)
    # Only downloads failed: the conversation's record was created meanwhile, so the store
    # is not "down".
    assert not orion.logged(log_events.STORE_UNAVAILABLE)

    # GCS recovers: Orion is healthy and answers the next message.
    gcs_proxy.clear_rules()
    health = orion.http.get("/healthz")
    assert (health.status_code, health.text) == (200, "ok")
    question = "What should I work on first this morning?"
    request = ask(orion, slack, claude, thread_ts, question, "Start with the release checklist.")
    assert not LEAKS.search(json.dumps(request["system"])), "no failure text in the prompt"

    assert replies(slack, thread_ts) == [GENERIC_GREETING, "Start with the release checklist."]
    assert_thread_is_clean(slack, thread_ts, gcs_proxy.url, bucket.name)
    assert_logs_are_clean(orion)
    # Nothing lost: what Orion could not read is still there, untouched.
    assert bucket.read(PREFERENCES_KEY) == json.dumps(PREFERENCES)
    assert bucket.read(GLOBAL_KEY) == GLOBAL_CONTEXT


# A restore cut off by GCS faults at thread start is not saved as the thread's memory, so
# the person's preferences come back as soon as GCS does.
def test_memory_a_faulted_thread_start_missed_reaches_claude_once_gcs_recovers(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(PREFERENCES_KEY, json.dumps(PREFERENCES))
    orion = orion_on_bucket(memory_load_timeout_s=0.5)
    gcs_proxy.add_rule("/download/", status=503, method="GET")
    thread_ts, greeting = open_thread(orion, slack)
    assert greeting == GENERIC_GREETING
    gcs_proxy.clear_rules()

    question = "Which format do I like my answers in?"
    request = ask(orion, slack, claude, thread_ts, question, "Short ones.")

    assert "short answers" in remembered(request)


# --- 2. a preferences read fails twice, then works ------------------------------------------


def test_503_twice_on_the_preferences_read_is_retried_and_the_greeting_is_personal(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(PREFERENCES_KEY, json.dumps(PREFERENCES))
    orion = orion_on_bucket(memory_load_timeout_s=5.0)
    flaky = gcs_proxy.add_rule(PREFERENCES_KEY, status=503, times=2, method="GET")

    thread_ts, greeting = open_thread(orion, slack)

    assert greeting.startswith("Welcome back, Gail!") and "short answers" in greeting
    assert flaky.hits == 2
    downloads = [r.status for r in gcs_proxy.requests if "preferences.json" in r.path_qs]
    assert downloads == [503, 503, 206], "retried until it worked, then left alone"
    [loaded] = orion.logged(log_events.TOOL_MEMORY_LOAD_SUCCESS)
    assert "user" in loaded["found"] and loaded["failed"] == loaded["timed_out"] == []
    assert not [line for line in orion.log_lines() if line["severity"] in ("WARNING", "ERROR")]

    question = "Remind me how I like my answers."
    memory = remembered(ask(orion, slack, claude, thread_ts, question, "Short."))
    assert "Gail" in memory and "short answers" in memory

    assert_thread_is_clean(slack, thread_ts, gcs_proxy.url, bucket.name)
    assert_logs_are_clean(orion)
    assert json.loads(bucket.read(PREFERENCES_KEY) or "") == PREFERENCES


# --- 3. one scope stalls past the budget ------------------------------------------------------


def test_a_stalled_scope_leaves_the_other_scopes_in_claudes_prompt(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(PREFERENCES_KEY, json.dumps(PREFERENCES))
    bucket.write(GLOBAL_KEY, GLOBAL_CONTEXT)
    orion = orion_on_bucket(memory_load_timeout_s=0.5)
    thread_ts, greeting = open_thread(orion, slack)
    assert greeting.startswith("Welcome back, Gail!")
    # Longer than the budget, shorter than the GCS client's request timeout (5 s): the
    # download finishes late, after Claude was asked, and is then ignored.
    stall = gcs_proxy.add_rule(GLOBAL_KEY, delay=1.0, times=1, method="GET")

    question = "What do you know about how I work?"
    memory = remembered(ask(orion, slack, claude, thread_ts, question, "You like short answers."))

    assert stall.hits == 1
    [timeout] = orion.logged(log_events.TOOL_MEMORY_LOAD_TIMEOUT)
    assert timeout["severity"] == "WARNING"
    assert timeout["timed_out"] == ["global"] and "user" in timeout["found"]
    assert "Gail" in memory and "short answers" in memory, "the scopes that arrived are kept"
    assert GLOBAL_CONTEXT not in memory

    assert replies(slack, thread_ts) == [greeting, "You like short answers."]
    assert_thread_is_clean(slack, thread_ts, gcs_proxy.url, bucket.name)
    assert_logs_are_clean(orion)
    assert bucket.read(GLOBAL_KEY) == GLOBAL_CONTEXT


# --- 4. the memory tool meets a persistent 503 -----------------------------------------------

NOTES_PATH = f"/memories/users/{USER}/notes.md"
NOTES = "Gail leads the payments migration.\n"
SAVED_ANSWER = "Got it: I'll remember that you lead the payments migration."


def test_a_memory_command_during_a_gcs_outage_is_a_friendly_error_and_its_retry_lands(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    orion = orion_on_bucket()
    thread_ts, _ = open_thread(orion, slack)
    create = {"command": "create", "path": NOTES_PATH, "file_text": NOTES}
    outages = []

    def respond(body: dict[str, Any]) -> script.ScriptItem | None:
        if body["model"] != orion.settings.anthropic_model:
            return None
        results = tool_results(body)
        if not results:
            # Everything under the person's memory directory fails from now (once the turn
            # has restored their memory) until the model sees the error.
            outages.append(gcs_proxy.add_rule(HOME.memory_prefix, status=503))
            return script.tool_use("memory", create)
        if results[-1].get("is_error"):
            gcs_proxy.clear_rules()  # GCS is back; the model tries again, a little later:
            # if the failed create was taken for the store being down, after the breaker's
            # first probe (0.5 s) has seen it answer.
            return script.tool_use("memory", create, delay=1.5)
        return script.text(SAVED_ANSWER)

    claude.responder = respond
    send(orion, slack, thread_ts, "Remember that I lead the payments migration.")
    wait_reply(slack, thread_ts, SAVED_ANSWER, timeout=PAST_RETRY_BUDGET)

    # The person sees the answer, nothing else; meanwhile Orion showed its memory work: the
    # save that failed as not done (never as saved), and the retry's save as done.
    assert replies(slack, thread_ts)[1:] == [SAVED_ANSWER]
    saves = [t for t in slack.tasks(CHANNEL, thread_ts) if t.title == "Saving notes.md"]
    assert [(t.status, t.output) for t in saves] == [
        ("error", "Couldn't reach my memory, so nothing was saved"),
        ("complete", "Saved"),
    ]
    assert_thread_is_clean(slack, thread_ts, gcs_proxy.url, bucket.name)

    # Claude got a model-visible error it can act on, then the retry's success.
    failed, retried = (tool_results(r)[-1] for r in main_requests(claude, orion)[1:3])
    [outage] = outages
    assert outage.hits >= 2, "the store retried before giving up"
    assert failed["is_error"] is True
    assert "temporarily unavailable" in result_text(failed)
    assert not LEAKS.search(result_text(failed)), result_text(failed)
    assert gcs_proxy.url not in result_text(failed) and bucket.name not in result_text(failed)
    assert not retried.get("is_error")
    assert result_text(retried) == f"File created successfully at: {NOTES_PATH}"

    # One line per command: the failure as an error (Orion's side, not the model's), then ok.
    first, second = orion.logged(log_events.TOOL_MEMORY_CREATE)
    assert (first["severity"], first["ok"], second["ok"]) == ("ERROR", False, True)
    assert first["error"].startswith("store unavailable")
    # The breaker opens only when nothing else the store was asked answered meanwhile
    # (another event's request may have). Either way the retry lands and nothing is lost.
    down = orion.logged(log_events.STORE_UNAVAILABLE)
    assert [line["severity"] for line in down] in ([], ["ERROR"])
    if down:
        assert orion.logged(log_events.STORE_RECOVERED)
    assert_logs_are_clean(orion)

    # Nothing lost: the memory is in the bucket, written once.
    assert bucket.read(f"{HOME.memory_prefix}notes.md") == NOTES


# --- 5. the after-turn writes fail -----------------------------------------------------------

PREVIOUS_SUMMARY = "Gail is choosing a name for a new kitten; she liked Miso."
FIRST_QUESTION = "From now on, call me Gabi. Which of Miso and Tofu suits a grey kitten best?"
FIRST_ANSWER = (
    "Miso suits a grey kitten well: it is short, warm and easy to call across a room, Gabi."
)
SECOND_QUESTION = "And what did we decide about the kitten's name?"
SECOND_ANSWER = "We settled on Miso for the grey kitten."
OUTAGE_SUMMARY = "# Cat names\nGail (Gabi) picked Miso for the grey kitten."


def test_503_on_the_after_turn_writes_leaves_the_reply_intact_and_the_next_turn_works(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    # A thread resumed from an earlier session: the conversation with its summary, the
    # profile listing it and the person's preferences exist, so the turn end's updates of
    # the profile (the new summary) and preferences are conditional on these generations
    # (named in the URL).
    thread_ts = slack.open_assistant_thread(CHANNEL)
    bucket.write(
        HOME.conversation_key(thread_ts),
        layout.conversation(
            USER, thread_ts, channel_id=CHANNEL, summary=PREVIOUS_SUMMARY, title="Cat names"
        ),
    )
    summary_generation = bucket.write(
        HOME.profile_key,
        layout.profile(conversations=[(thread_ts, "Cat names")], channel_id=CHANNEL),
    )
    preferences_generation = bucket.write(PREFERENCES_KEY, json.dumps(PREFERENCES))
    orion = orion_on_bucket(memory_after_turn_timeout_s=0.75)
    answer_questions(
        claude,
        orion,
        {FIRST_QUESTION: FIRST_ANSWER, SECOND_QUESTION: SECOND_ANSWER},
        summary=OUTAGE_SUMMARY,
    )
    # The profile's write (the new summary) stalls until the test lets it go: it outlasts
    # the turn end's budget however busy the machine is.
    summary_write = gcs_proxy.add_rule(
        f"ifGenerationMatch={summary_generation}", hold=True, method="POST"
    )
    # The preference heard in the question is saved as the turn goes: GCS recovers while
    # that write is still being retried.
    preferences_write = gcs_proxy.add_rule(
        f"ifGenerationMatch={preferences_generation}", status=503, method="POST", times=2
    )

    send(orion, slack, thread_ts, FIRST_QUESTION)
    wait_reply(slack, thread_ts, FIRST_ANSWER)
    [failed] = orion.wait_logged(log_events.MEMORY_AFTER_TURN_FAILED, timeout=PAST_RETRY_BUDGET)

    # The reply is whole, and nothing follows it.
    assert replies(slack, thread_ts) == [FIRST_ANSWER]
    assert (failed["severity"], failed["error"]) == ("WARNING", "Timeout")
    assert summary_write.hits >= 1 and preferences_write.hits == 2
    [saved] = orion.wait_logged(log_events.MEMORY_PREFERENCES_WRITE)
    assert saved["changed"] is True
    assert json.loads(bucket.read(PREFERENCES_KEY) or "")["name"] == "Gabi"

    # GCS answers the stalled write: it lands.
    summary_write.release()
    gcs_proxy.clear_rules()
    bucket.wait_for(
        HOME.profile_key, lambda content: "picked Miso" in (layout.summary_of_latest(content) or "")
    )

    # The next message works, and Claude has everything said during the outage.
    send(orion, slack, thread_ts, SECOND_QUESTION)
    wait_reply(slack, thread_ts, SECOND_ANSWER)
    memory = remembered(request_for(claude, orion, SECOND_QUESTION))
    assert "Gabi" in memory and "picked Miso" in memory
    slack.wait_for(
        lambda: orion.logged(log_events.MEMORY_AFTER_TURN), what="the next after-turn step"
    )
    listed = layout.profile_of(bucket.read(HOME.profile_key)).conversations
    assert [e.thread_ts for e in listed] == [thread_ts]

    assert replies(slack, thread_ts) == [FIRST_ANSWER, SECOND_ANSWER]
    assert_thread_is_clean(slack, thread_ts, gcs_proxy.url, bucket.name)
    assert_logs_are_clean(orion)


def test_a_quick_next_message_is_answered_with_the_exchange_still_being_saved(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    orion = orion_on_bucket()
    thread_ts, _ = open_thread(orion, slack)
    orion.wait_idle()
    # The turn's one write of the conversation (question and answer) is slow to land; the
    # person has already written again.
    record = HOME.conversation_key(thread_ts)
    saving = gcs_proxy.add_rule(
        f"ifGenerationMatch={bucket.generations()[record]}", hold=True, method="POST"
    )
    ask(orion, slack, claude, thread_ts, "Capital of France?", "Paris.")
    slack.wait_for(lambda: saving.hits, what="the exchange's write under way")
    answer_questions(claude, orion, {"How many people live there?": "About 2.1 million."})
    send(orion, slack, thread_ts, "How many people live there?")
    time.sleep(0.3)  # the message has arrived and would read the record without the exchange
    saving.release()
    wait_reply(slack, thread_ts, "About 2.1 million.")

    messages = request_for(claude, orion, "How many people live there?")["messages"]
    assert [message_text(m) for m in messages] == [
        "Capital of France?",
        "Paris.",
        "How many people live there?",
    ]
    orion.wait_idle()
    assert layout.messages_in(bucket.read(record)) == [
        "Capital of France?",
        "Paris.",
        "How many people live there?",
        "About 2.1 million.",
    ]


# --- 6. the retry-dedupe claim cannot be written ----------------------------------------------


def test_an_unreachable_claim_store_still_answers_the_message_once(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    orion = orion_on_bucket()
    thread_ts, _ = open_thread(orion, slack)
    orion.wait_idle()  # the conversation is recorded
    # Every create-only upload: the claims (and the person's first profile and search
    # index, at the turn's end) fail.
    claims = gcs_proxy.add_rule("ifGenerationMatch=0", status=503, method="POST")
    question = "Can you draft a two-line status update for the payments team?"
    answer = "Payments: migration on track for Thursday. No blockers."
    answer_questions(claude, orion, {question: answer})

    payload = send(orion, slack, thread_ts, question)
    # Slack delivers it again while the claim is still being retried.
    assert orion.post_event(payload).is_success
    wait_reply(slack, thread_ts, answer, timeout=PAST_RETRY_BUDGET)
    gcs_proxy.clear_rules()

    assert claims.hits >= 2
    [unavailable] = orion.logged(log_events.SLACK_EVENT_CLAIM_UNAVAILABLE)
    assert unavailable["severity"] == "WARNING"
    assert unavailable["event_id"] == payload["event_id"]
    [duplicate] = orion.logged(log_events.SLACK_EVENT_DUPLICATE)
    assert duplicate["source"] == "memory"

    # Answered, once.
    assert replies(slack, thread_ts)[1:] == [answer]
    asked = [r for r in main_requests(claude, orion) if last_user_text(r) == question]
    assert len(asked) == 1
    assert_thread_is_clean(slack, thread_ts, gcs_proxy.url, bucket.name)
    assert_logs_are_clean(orion)
    # The conversation itself is kept once GCS is back. (The claim may land too, late: the
    # upload abandoned after the claim budget keeps retrying in its worker thread.)
    bucket.wait_for(HOME.conversation_key(thread_ts), lambda content: question in content)
