"""Storage trouble never reaches the person (docs/architecture.md): what they see when the bucket is
slow, down, or shared with another instance, and when the instance has just started.

End to end through signed events: the real Orion HTTP app, the fake Slack and Claude, and
the GCS emulator behind a FaultyProxy. The assertions are about order and outcome (which
requests were in flight together, what came before the greeting, which requests reached
the store at all), never about how long anything took: the benchmarks measure that
(`bench/storage_trouble.py`).
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable
from urllib.parse import unquote

import pytest

from app import shutdown
from app.learning.conversation_record import ConversationRecord
from app.learning.upgrade import LAYOUT_MARKER
from app.memory.homes import preferences_key
from app.memory.key_prefixes import LEGACY_PREFIXES
from app.slack.assistant_view import RESTORING_STATUS
from app.slack.conversation.dedupe import event_claim_key
from app.slack.conversation.greeting import GENERIC_GREETING
from app.storage.breaker import PROBE_KEY
from tests import layout, log_events
from tests.e2e import conversation
from tests.e2e.conversation import main_requests, remembered
from tests.e2e.memory_bucket import GLOBAL_KEY, Bucket
from tests.fakes import slack_events as events
from tests.fakes._waiting import wait_until
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.fault_proxy import FaultyProxy, ProxiedRequest
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, CHANNEL = "U0HANA", "D0HANA"
OTHER, OTHER_CHANNEL = "U0KENJI", "D0KENJI"
PREFERENCES = {"name": "Hana", "response_style": "bullet points"}
PREFERENCES_KEY = preferences_key(USER)
WELCOME_BACK = "Welcome back, Hana!"
# Long enough to be summarised at turn end, and stating a preference to save.
QUESTION = "Call me Hana-chan from now on. Can you plan my day around the design review at ten?"
PLAIN_QUESTION = "What time is the design review today, and who else is invited to it?"
PLAN = "Here is the plan: prepare the slides first, then the design review at ten, then lunch."


def store_requests(proxy: FaultyProxy) -> list[ProxiedRequest]:
    """Every request that reached the bucket, except the breaker's probes and the start's
    own (its layout mark, its look for the older layout: app/learning/upgrade.py): no
    event's."""
    return [
        r
        for r in proxy.requests
        if not r.names(PROBE_KEY) and not r.names(LAYOUT_MARKER) and not _upgrade_listing(r)
    ]


def _upgrade_listing(request: ProxiedRequest) -> bool:
    listed = request.path_qs.partition("prefix=")[2].partition("&")[0]
    return unquote(listed) in LEGACY_PREFIXES


def open_thread(orion: OrionServer, slack: FakeSlack) -> tuple[str, str]:
    return conversation.open_thread(orion, slack, USER, CHANNEL)


# --- storage down: skipped at once, back by itself ---------------------------------------------


def test_an_outage_is_detected_once_skipped_by_later_events_and_healed_by_the_probe(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(PREFERENCES_KEY, json.dumps(PREFERENCES))
    orion = orion_on_bucket(memory_load_timeout_s=0.5)
    # The outage begins once the start's own look at the bucket has been answered: an
    # answer to what was asked before it, arriving after its first failure was sent, would
    # rightly say the store answered meanwhile (and on a busy machine one did).
    wait_until(
        lambda: (
            sum(map(_upgrade_listing, gcs_proxy.requests)) == len(LEGACY_PREFIXES)
            and gcs_proxy.in_flight == 0
        ),
        what="the start's listings answered",
    )
    orion.http.get("/healthz")  # one turn of Orion's loop after them: their answers are in
    outage = gcs_proxy.add_rule("", status=503)  # every request to the bucket fails

    # The first thread meets the outage: a generic greeting, nothing false ("welcome back").
    _, first_greeting = open_thread(orion, slack)
    assert first_greeting == GENERIC_GREETING
    [down] = orion.wait_logged(log_events.STORE_UNAVAILABLE)
    assert down["severity"] == "ERROR"
    assert "Traceback" in down["exception"] and "503" in down["exception"], "with its cause"
    assert down["event_id"] and down["user"] == USER, "with the event that found out"
    orion.wait_idle()
    scope_failures = len(orion.logged(log_events.TOOL_MEMORY_LOAD_SCOPE_FAILED))

    # While it is down, events do not touch the store at all: a greeting, then a message
    # that goes straight to Claude, with no memory and keeping none (nothing can say whose
    # the conversation is), its history only the message itself. Someone else's, so that
    # what reaches the bucket says whose event sent it (what the first thread sent before
    # the breaker opened may arrive after).
    thread_ts, second_greeting = conversation.open_thread(orion, slack, OTHER, OTHER_CHANNEL)
    assert second_greeting == GENERIC_GREETING
    claude.reply(PLAN)
    message = conversation.post_user_message(
        orion, slack, OTHER, OTHER_CHANNEL, thread_ts, QUESTION
    )
    conversation.wait_for_answer(slack, OTHER_CHANNEL, thread_ts, PLAN)
    [line] = orion.wait_logged(log_events.SLACK_CONVERSATION_UNCHECKED)
    assert (line["thread_ts"], line["user"]) == (thread_ts, OTHER), "said for whom"
    orion.wait_idle()
    assert not orion.logged(log_events.MEMORY_AFTER_TURN_FAILED), "nothing to write"
    theirs = (OTHER, OTHER_CHANNEL, thread_ts, thread_ts.replace(".", "-"), message["event_id"])
    asked = [r for r in gcs_proxy.requests if any(r.names(name) for name in theirs)]
    assert asked == [], "the store was not asked anything while it was down"
    assert len(orion.logged(log_events.STORE_UNAVAILABLE)) == 1, "said once, not once per event"
    assert len(orion.logged(log_events.TOOL_MEMORY_LOAD_SCOPE_FAILED)) == scope_failures
    request = next(r for r in main_requests(claude, orion) if last_user_text(r) == QUESTION)
    assert "<remembered_context>" not in json.dumps(request["system"])

    # The bucket comes back: the probe notices without any event, and memories return.
    gcs_proxy.clear_rules()
    # (Probes back off up to 15 s apart while it stays down.)
    [recovered] = orion.wait_logged(log_events.STORE_RECOVERED, timeout=30)
    assert recovered["severity"] == "INFO"
    _, third_greeting = open_thread(orion, slack)
    assert third_greeting.startswith(WELCOME_BACK)
    assert outage.hits >= 1
    for update in slack.calls_to("chat.postMessage"):
        assert "Error" not in update.args.get("text", ""), "no exception text in the thread"


# --- one storage round trip before the greeting ----------------------------------------------


def test_the_record_is_created_beside_the_memory_reads_and_the_greeting_waits_for_nothing_else(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
) -> None:
    bucket.write(PREFERENCES_KEY, json.dumps(PREFERENCES))
    bucket.write(GLOBAL_KEY, "Kestrel Labs ships on Thursdays.")
    orion = orion_on_bucket()
    gcs_proxy.add_rule("", delay=0.3)  # every storage request is slow: order shows
    context = {"channel_id": "C0LAUNCH", "team_id": "T0TEST"}
    thread_ts = slack.open_assistant_thread(CHANNEL)
    started = events.assistant_thread_started(USER, CHANNEL, thread_ts, context)
    assert orion.post_event(started).status_code == 200
    [greeting] = slack.wait_for(lambda: slack.bot_messages(CHANNEL, thread_ts), timeout=30)
    assert greeting.text.startswith(WELCOME_BACK)
    orion.wait_idle()

    requests = store_requests(gcs_proxy)
    # The conversation's record (create-only: also the claim a retried delivery loses),
    # with Slack's context of the thread in it.
    [record] = [r for r in requests if r.method == "POST" and "ifGenerationMatch=0" in r.path_qs]
    stored = ConversationRecord.parse(bucket.read(layout.conversation_key(USER, thread_ts)))
    assert stored is not None and stored.context == context
    [posted] = [c for c in slack.calls_to("chat.postMessage") if c.args["thread_ts"] == thread_ts]
    before = [r for r in requests if r.started < posted.at]
    # Preferences and the profile (how to welcome the person back): read beside the
    # record's creation, one round trip in front of the greeting (the greeting needs no
    # organisation context).
    reads = [r for r in before if r.method == "GET" and "alt=media" in r.path_qs]
    assert len(reads) == 2, [r.path_qs for r in requests]
    assert sorted(before, key=_start) == sorted([record, *reads], key=_start)
    assert all(record.overlaps(read) for read in reads), "the record goes beside the reads"
    assert all(r.finished <= posted.at for r in before)
    # After the greeting, one more request: the profile read again (the erasure guard).
    after = [r for r in requests if r.started > posted.at]
    assert [(r.method, "profile.json" in r.path_qs) for r in after] == [("GET", True)]


def test_a_thread_start_and_a_message_make_the_storage_requests_counted_for_them(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    """docs/benchmarks.md: a returning person's thread start makes at most 4 requests, 3
    of them (all at once) before the greeting; a message in an open thread at most 8 with
    its turn end, 4 of them first and all at once (the organisation's context is shared,
    not read again), no object read or written twice, and no Slack history read."""
    bucket.write(PREFERENCES_KEY, json.dumps(PREFERENCES))
    orion = orion_on_bucket(memory_global_context_max_age_s=600)
    open_thread(orion, slack)  # the services built, the organisation's context kept
    orion.wait_idle()

    already = len(store_requests(gcs_proxy))
    thread_ts, _ = open_thread(orion, slack)
    orion.wait_idle()
    thread_start = store_requests(gcs_proxy)[already:]
    [greeted] = [c for c in slack.calls_to("chat.postMessage") if c.args["thread_ts"] == thread_ts]
    # A thread's first message adds its entry in the person's index and their welcome: the
    # next one is counted. No preference is stated (saving one is requests of its own).
    for n, question in enumerate((PLAIN_QUESTION, f"{PLAIN_QUESTION} And tomorrow?"), start=1):
        if n == 2:
            gcs_proxy.add_rule("", delay=0.2)  # every request slow: what goes together shows
        claude.reply(PLAN)
        before = len(store_requests(gcs_proxy))
        conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, question)
        slack.wait_for(
            lambda n=n: conversation.answers(slack, CHANNEL, thread_ts).count(PLAN) == n,
            what="the answer",
        )
        orion.wait_idle()
    message = sorted(store_requests(gcs_proxy)[before:], key=_start)

    assert len(thread_start) <= 4, [(r.method, r.path_qs) for r in thread_start]
    assert len([r for r in thread_start if r.started < greeted.at]) == 3
    assert len(message) <= 8, [(r.method, r.path_qs) for r in message]
    assert _each_once(message), [(r.method, r.path_qs) for r in message]
    # First, all at once: the claim, the conversation, the preferences, the profile.
    opening = message[:4]
    assert all(a.overlaps(b) for a in opening for b in opening if a is not b)
    assert sum("ifGenerationMatch=0" in r.path_qs for r in opening) == 1
    reads = sorted(
        name
        for r in opening
        for name in ("conversations%2F", "preferences.json", "profile.json")
        if name in r.path_qs
    )
    assert reads == ["conversations%2F", "preferences.json", "profile.json"]
    assert slack.calls_to("conversations.replies") == []


def _each_once(requests: list[ProxiedRequest]) -> bool:
    """No object read twice, nor written twice."""
    reads = [r.path_qs.partition("?")[0] for r in requests if r.method == "GET"]
    writes = [r.upload_name for r in requests if r.method == "POST"]
    return len(reads) == len(set(reads)) and len(writes) == len(set(writes))


def _start(request: ProxiedRequest) -> float:
    return request.started


def test_a_message_reads_its_conversation_and_memory_beside_the_claim(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(PREFERENCES_KEY, json.dumps(PREFERENCES))
    orion = orion_on_bucket()
    thread_ts, _ = open_thread(orion, slack)
    orion.wait_idle()
    gcs_proxy.add_rule("", delay=0.3)
    already = len(gcs_proxy.requests)
    claude.reply("Sure.")

    conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, "Ready?")
    conversation.wait_for_answer(slack, CHANNEL, thread_ts, "Sure.")

    since = gcs_proxy.requests[already:]
    # The first create-only upload: the event's claim.
    claim = next(r for r in since if "ifGenerationMatch=0" in r.path_qs)
    reads = [
        next(r for r in since if r.method == "GET" and name in r.path_qs)
        for name in ("conversations%2F", "preferences.json", "profile.json")
    ]
    assert all(claim.overlaps(read) for read in reads), "one storage round trip, not several"
    assert not [r for r in since if "threads%2F" in r.path_qs], "no copy kept with the thread"
    assert slack.calls_to("conversations.replies") == [], "the history is Orion's transcript"
    request = next(r for r in main_requests(claude, orion) if last_user_text(r) == "Ready?")
    assert "Hana" in remembered(request), "the memory, restored, reached Claude"


# --- a shutdown while the turn end waits on storage ------------------------------------------


# A coroutine made and never awaited warns when collected, as an unraisable exception.
@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_turn_end_a_shutdown_cuts_off_says_so_and_leaves_nothing_half_begun(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A drain that runs out at once (app/shutdown.py gives 6.5 s, then memory work 8 s).
    monkeypatch.setattr(shutdown, "FINISH_WITHIN_S", 0.1)
    monkeypatch.setattr(shutdown, "MEMORY_WORK_UNTIL_S", 0.2)
    bucket.write(PREFERENCES_KEY, json.dumps(PREFERENCES))
    orion = orion_on_bucket()
    thread_ts, _ = open_thread(orion, slack)
    orion.wait_idle()
    # Every write now hangs: the transcript's too, which the turn end waits for.
    gcs_proxy.add_rule("uploadType=", delay=30, method="POST")
    claude.reply(PLAN)
    conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, QUESTION)
    conversation.wait_for_answer(slack, CHANNEL, thread_ts, PLAN)

    orion.__exit__()  # as SIGTERM would, while the turn end still waits
    gc.collect()  # a turn end begun and dropped would warn here (an error, in this test)

    cut = orion.logged(log_events.SLACK_BACKGROUND_CUT_OFF)
    # The lost memory work, each piece named: the preference the message stated (its
    # write hangs too) and the turn's end.
    assert sorted(line["task"] for line in cut) == ["memory.after_turn", "memory.preferences"]
    assert {line["severity"] for line in cut} == {"WARNING"}
    summaries = [r for r in claude.requests if r["model"] != orion.settings.anthropic_model]
    assert summaries == [], "the turn's end never began: no summary was asked for"
    assert not orion.logged(log_events.SLACK_BACKGROUND_FAILED)


# --- a second instance ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "done", "source"),
    [
        ("thread_started", log_events.SLACK_THREAD_STARTED_DONE, "record"),
        ("user_message", log_events.SLACK_USER_MESSAGE_DONE, "claim"),
    ],
)
def test_a_retry_reaching_an_instance_after_another_claimed_it_changes_nothing(
    orion_on_bucket: Callable[..., OrionServer],
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
    kind: str,
    done: str,
    source: str,
) -> None:
    orion = orion_on_bucket()
    thread_ts = slack.open_assistant_thread(CHANNEL)
    if kind == "thread_started":
        payload = events.assistant_thread_started(USER, CHANNEL, thread_ts)
        # Another instance took the first delivery: it created the conversation's record
        # (a thread start's claim).
        bucket.write(
            layout.conversation_key(USER, thread_ts),
            layout.conversation(USER, thread_ts, channel_id=CHANNEL),
        )
    else:
        ts = slack.add_user_message(CHANNEL, thread_ts, USER, "Anyone there?")
        payload = events.user_message_in_thread(USER, CHANNEL, thread_ts, "Anyone there?", ts=ts)
        # Another instance took the first delivery: its claim is in the bucket.
        bucket.write(event_claim_key(payload["event_id"]), '{"instance": "another"}')

    assert orion.post_event(payload, retry_num=1).status_code == 200
    orion.wait_logged(done)

    [duplicate] = orion.logged(log_events.SLACK_EVENT_DUPLICATE)
    assert duplicate["source"] == source
    # Nothing visible: no status set or cleared over the other instance's, no message.
    assert slack.statuses(CHANNEL, thread_ts) == []
    assert slack.bot_messages(CHANNEL, thread_ts) == []
    assert claude.requests == []


def test_a_first_delivery_shows_its_status_before_its_claim_is_settled(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    slack: FakeSlack,
) -> None:
    orion = orion_on_bucket()
    claims = gcs_proxy.add_rule("ifGenerationMatch=0", delay=0.5, method="POST")
    thread_ts = slack.open_assistant_thread(CHANNEL)
    orion.post_event(events.assistant_thread_started(USER, CHANNEL, thread_ts))
    slack.wait_for(lambda: slack.bot_messages(CHANNEL, thread_ts), what="the greeting")

    [status, *_] = slack.statuses(CHANNEL, thread_ts)
    assert status.status == RESTORING_STATUS
    [claim] = [r for r in gcs_proxy.requests if r.rule == claims.match]
    [set_status] = slack.calls_to("assistant.threads.setStatus")[:1]
    assert set_status.at < claim.finished
