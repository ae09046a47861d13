"""Turn end: session summaries, preferences said in passing, and recall of past threads.

End to end through signed events: Orion over HTTP, the fake Slack and Claude, memories in
the GCS emulator. The summary model is answered by a FakeClaude `responder` (it inspects
`body["model"]`), so the main model's script is never consumed by a summary call. The
assertions are what the person sees (answers, greetings), what Claude is sent (system
prompt, tool results) and what is in the bucket — never timings.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from app.memory.homes import person, preferences_key
from app.slack.conversation.greeting import GENERIC_GREETING
from tests import layout, log_events
from tests.e2e import conversation
from tests.e2e.conversation import main_requests, remembered, result_text, system_text
from tests.e2e.memory_bucket import GLOBAL_KEY, Bucket
from tests.fakes._waiting import wait_until
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.claude_script import Failure, ScriptItem, text
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.layout import summary_of_latest
from tests.orion_server import OrionServer, orion_servers
from tests.span_log import SpanLog

USER, CHANNEL = "U0SAM", "D0SAM"
OTHER, OTHER_CHANNEL = "U0BOB", "D0BOB"
PROFILE, OTHER_PROFILE = person(USER).profile_key, person(OTHER).profile_key


# --- fixtures ---------------------------------------------------------------------------


@pytest.fixture
def start_orion(
    slack: FakeSlack, claude: FakeClaude, gcs_bucket: str
) -> Iterator[Callable[..., OrionServer]]:
    """Start Orion on the test's bucket with the given settings overrides."""
    with orion_servers(slack, claude, gcs_memories_bucket=gcs_bucket) as start:
        yield start


# --- the summary model ------------------------------------------------------------------


def answer_summaries(
    claude: FakeClaude, orion: OrionServer, answer: Callable[[str], ScriptItem]
) -> None:
    """Answer every request for the summary model with `answer(prompt)`."""
    model = orion.settings.summary_model

    def respond(body: dict[str, Any]) -> ScriptItem | None:
        return answer(last_user_text(body)) if body["model"] == model else None

    claude.responder = respond


def summary_requests(claude: FakeClaude, orion: OrionServer) -> list[dict[str, Any]]:
    return [r for r in claude.requests if r["model"] == orion.settings.summary_model]


# --- what a person does -------------------------------------------------------------------


def open_thread(
    orion: OrionServer, slack: FakeSlack, user: str = USER, channel: str = CHANNEL
) -> tuple[str, str]:
    """Open an assistant thread; returns its ts and Orion's greeting."""
    return conversation.open_thread(orion, slack, user, channel)


def ask(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    thread_ts: str,
    question: str,
    answer: str,
    *,
    user: str = USER,
    channel: str = CHANNEL,
) -> None:
    """Post `question`; Claude answers `answer`; wait until it is in the thread."""
    claude.reply(answer)
    conversation.post_user_message(orion, slack, user, channel, thread_ts, question)
    conversation.wait_for_answer(slack, channel, thread_ts, answer)


# --- 1. the session summary ----------------------------------------------------------------

FIRST_SUMMARY = (
    "# Q3 budget review\n"
    "Cloud spend is 20% over the Q3 plan. Orion suggested moving batch jobs to spot instances."
)
SECOND_SUMMARY = (
    "# Q3 budget review\n"
    "Cloud spend is 20% over the Q3 plan. Orion suggested moving batch jobs to spot "
    "instances and drafted the proposal for finance; next step: send it to Priya by Friday."
)


def test_a_thread_summary_is_kept_after_each_turn_and_restored_when_the_thread_resumes(
    start_orion: Callable[..., OrionServer],
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    orion = start_orion()
    answer_summaries(
        claude,
        orion,
        lambda prompt: text(SECOND_SUMMARY if "<previous_summary>" in prompt else FIRST_SUMMARY),
    )
    thread_ts, _ = open_thread(orion, slack)
    ask(
        orion,
        slack,
        claude,
        thread_ts,
        "Can you help me review our Q3 budget? Cloud spend is 20% over plan.",
        "Sure. The biggest lever is moving batch jobs to spot instances.",
    )
    # The newest summary waits in the person's profile, with the welcome back to it.
    first = bucket.wait_for(PROFILE, lambda c: "spot instances." in (summary_of_latest(c) or ""))
    welcome = layout.welcome_in(first)
    assert welcome is not None and welcome.summary is not None
    assert (welcome.topic, welcome.summary.title) == ("Q3 budget review", "Q3 budget review")
    assert welcome.summary.body == FIRST_SUMMARY.splitlines()[1]

    ask(
        orion,
        slack,
        claude,
        thread_ts,
        "Draft the proposal for finance, please.",
        "Here is a draft proposal: move nightly batch jobs to spot instances.",
    )
    profile = bucket.wait_for(PROFILE, lambda c: "Priya" in (summary_of_latest(c) or ""))

    # The summary: a title, when it was made, and the summary itself.
    welcome = layout.welcome_in(profile)
    assert welcome is not None and welcome.summary is not None
    assert welcome.summary.title == "Q3 budget review"
    assert welcome.summary.updated.strftime("%Y-%m-%d") == time.strftime("%Y-%m-%d", time.gmtime())
    assert welcome.summary.body == SECOND_SUMMARY.splitlines()[1]
    # The conversation's own object took the previous one as the second answer ended.
    record = bucket.read(layout.conversation_key(USER, thread_ts))
    assert layout.summary_in(record) == FIRST_SUMMARY.splitlines()[1]

    # Rolling: the second call starts from the first summary plus only the new exchange.
    first_call, second_call = summary_requests(claude, orion)
    assert "<previous_summary>" not in last_user_text(first_call)
    prompt = last_user_text(second_call)
    assert "<previous_summary>" in prompt and "Orion suggested moving batch jobs" in prompt
    assert "Draft the proposal for finance" in prompt
    assert "Cloud spend is 20% over plan" not in prompt.split("<new_messages>")[1]
    assert second_call.get("stream") is not True
    assert "tools" not in second_call

    # The person's profile lists the thread under its title.
    listed = layout.profile_of(bucket.read(PROFILE)).conversations
    assert [(e.thread_ts, e.title) for e in listed] == [(thread_ts, "Q3 budget review")]

    # The next message restores the memory, and Claude sees what was discussed.
    before = len(main_requests(claude, orion))
    ask(orion, slack, claude, thread_ts, "Where did we land?", "You were sending it to Priya.")
    request = main_requests(claude, orion)[before]
    assert "send it to Priya by Friday" in remembered(request)


def test_a_failing_summary_model_leaves_the_reply_intact_and_writes_the_fallback(
    spans: SpanLog,
    start_orion: Callable[..., OrionServer],
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    orion = start_orion()
    answer_summaries(claude, orion, lambda _: Failure(529, "overloaded_error", "Overloaded"))
    thread_ts, _ = open_thread(orion, slack)
    question = "Which regions does the payments service run in, and where is its failover?"
    reply = "Payments runs in europe-west1 with failover to europe-west4, tested monthly."
    ask(orion, slack, claude, thread_ts, question, reply)

    profile = bucket.wait_for(PROFILE, lambda c: summary_of_latest(c) is not None)
    # What the person sees is untouched: the answer, and nothing else after it. The
    # after-turn step is the last thing the turn does, and logs its line at its end.
    orion.wait_logged(log_events.MEMORY_AFTER_TURN)
    orion.wait_idle()
    assert conversation.answers(slack, CHANNEL, thread_ts) == [reply]
    # The fallback: a title, and excerpts of both sides.
    welcome = layout.welcome_in(profile)
    assert welcome is not None and welcome.summary is not None and welcome.summary.title
    summary = welcome.summary.body
    said, answered = summary.split("- The person said: ")[1].split("- Orion answered: ")
    assert question in said and reply in answered
    # One attempt, no retries: a summary is not worth waiting for.
    assert len(summary_requests(claude, orion)) == 1

    def summary_write_output() -> dict[str, Any] | None:
        found = spans.named("memory.summary.write")
        return spans.attributes(found[0]).get("langfuse.observation.output") if found else None

    output = slack.wait_for(summary_write_output, 5, "the memory.summary.write span")
    assert output["source"] == "fallback" and output["failure"] == "OverloadedError"
    [after_turn] = spans.named("memory.after_turn")
    [root] = spans.named("slack.user_message")
    assert after_turn.context.trace_id == root.context.trace_id
    assert spans.attributes(after_turn)["langfuse.observation.output"]["ok"] is True
    # Spans carry counts and outcomes, never what was said.
    assert "europe-west4" not in json.dumps(
        [dict(s.attributes or {}) for s in spans.all() if s.name.startswith("memory.")]
    )
    # One log line per step, with outcome and duration, for log-based metrics.
    lines = orion.log_lines()
    [done] = [line for line in lines if line["message"] == log_events.MEMORY_AFTER_TURN]
    assert done["source"] == "fallback" and done["summary_failure"] == "OverloadedError"
    assert done["thread_ts"] == thread_ts
    # The duration is the step's own: it covers the summary's write and lies within the
    # step's span (give or take the 0.1 ms the log rounds to).
    [summary_write] = spans.named("memory.summary.write")
    outer, inner = spans.duration_ms(after_turn), spans.duration_ms(summary_write)
    assert inner - 0.1 <= done["duration_ms"] <= outer + 0.1
    [failed] = [line for line in lines if line["message"] == log_events.MEMORY_SUMMARY_MODEL_FAILED]
    assert failed["severity"] == "WARNING"
    assert "Traceback" in failed["exception"] and failed["thread_ts"] == thread_ts
    memory_lines = [line for line in lines if line["message"].startswith("memory.")]
    assert "europe-west4" not in json.dumps(memory_lines)


# --- 2. preferences said once -------------------------------------------------------------


def test_preferences_said_once_are_kept_and_greet_the_next_thread(
    spans: SpanLog,
    start_orion: Callable[..., OrionServer],
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    orion = start_orion()
    answer_summaries(claude, orion, lambda _: text("# Preferences\nSam set preferences."))
    thread_ts, greeting = open_thread(orion, slack)
    assert greeting == GENERIC_GREETING
    ask(
        orion,
        slack,
        claude,
        thread_ts,
        "Hi! Please call me Sam. I prefer bullet points. Do you prefer tabs or spaces?",
        "Noted, Sam.",
    )
    stored = json.loads(bucket.wait_for(preferences_key(USER)))
    learned = stored.pop("_learned")
    assert stored == {"name": "Sam", "response_style": "bullet points"}
    # Each remembers where it was said: this thread, for the person's Home tab.
    assert {(v["channel"], v["thread"]) for v in learned.values()} == {(CHANNEL, thread_ts)}
    assert sorted(learned) == ["name", "response_style"]
    # Claude was never asked to save anything: the memory tool was not used.
    assert all("tool_result" not in json.dumps(r["messages"]) for r in claude.requests)
    [write] = slack.wait_for(lambda: spans.named("memory.preferences.write"), 5, "the write span")
    attributes = spans.attributes(write)
    keys = attributes["langfuse.observation.metadata.keys"]
    assert list(keys) == ["name", "response_style"], keys
    assert attributes["langfuse.observation.output"] == {"ok": True, "changed": True}
    assert "Sam" not in json.dumps(dict(write.attributes or {}))

    ask(orion, slack, claude, thread_ts, "Actually I prefer numbered lists.", "Numbered it is.")
    bucket.wait_for(preferences_key(USER), lambda c: "numbered lists" in c)

    next_thread, greeting = open_thread(orion, slack)
    assert greeting.startswith("Welcome back, Sam!")
    assert "numbered lists" in greeting and "bullet points" not in greeting
    before = len(main_requests(claude, orion))
    ask(orion, slack, claude, next_thread, "What's on my plate today?", "Here's your day.")
    assert "response style: numbered lists" in system_text(main_requests(claude, orion)[before])


def test_a_returning_person_on_a_fresh_instance_is_remembered_without_asking_slack_whose_dm(
    start_orion: Callable[..., OrionServer],
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    # Slack says whose a DM is (conversations.open) only where no conversation of theirs
    # Orion keeps there vouches for it: a burst of returning people on a new instance asks
    # it nothing, so its rate limit cannot leave them without their memory.
    first = start_orion()
    answer_summaries(claude, first, lambda _: text(FIRST_SUMMARY))
    thread_ts, _ = open_thread(first, slack)
    question = "Please call me Sam. Can you help me review our Q3 budget? Cloud spend is over."
    ask(first, slack, claude, thread_ts, question, "Sure, Sam: spot instances first.")
    bucket.wait_for(PROFILE, lambda c: CHANNEL in c)
    first.wait_idle()
    assert len(slack.calls_to("conversations.open")) == 1, "asked once, for a first contact"

    fresh = start_orion()  # another instance: it has asked Slack nothing yet
    next_thread, greeting = open_thread(fresh, slack)
    ask(fresh, slack, claude, next_thread, "What's on my plate today?", "Here's your day.")

    assert greeting.startswith("Welcome back, Sam!")
    assert "name: Sam" in system_text(main_requests(claude, fresh)[-1])
    assert len(slack.calls_to("conversations.open")) == 1, "the records vouched for the DM"


# --- 3. recall ------------------------------------------------------------------------------

PAST_THREADS = {
    # marker in the person's question → (title, summary)
    "cloud spend": (
        "Q3 budget: cutting cloud spend",
        "Reviewed the Q3 budget: cloud spend 20% over plan; agreed to move batch jobs to "
        "spot instances.",
    ),
    "hiring": ("Hiring plan for the data team", "Two data engineers in Q4; interviews in May."),
    "offsite": ("Team offsite in Lisbon", "Offsite agreed for June; the travel budget is fine."),
    "sales": (
        "Q3 budget for the sales team",
        "Bob's Q3 budget: the sales team gets two more account executives.",
    ),
}


def _summary_of(prompt: str) -> ScriptItem:
    for marker, (title, body) in PAST_THREADS.items():
        if marker in prompt:
            return text(f"# {title}\n{body}")
    return text("# Something else\nNothing to do with budgets.")


def test_recall_finds_the_right_past_thread_and_never_another_persons(
    spans: SpanLog,
    start_orion: Callable[..., OrionServer],
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    orion = start_orion()
    answer_summaries(claude, orion, _summary_of)
    filler = " Please think it through carefully, with the numbers and the trade-offs spelled out."
    own = {}
    for marker in ("cloud spend", "hiring", "offsite"):
        thread_ts, _ = open_thread(orion, slack)
        ask(orion, slack, claude, thread_ts, f"Let's talk about {marker}.{filler}", "Sure.")
        own[marker] = thread_ts
    bobs_thread, _ = open_thread(orion, slack, OTHER, OTHER_CHANNEL)
    ask(
        orion,
        slack,
        claude,
        bobs_thread,
        f"Let's plan the sales budget for Q3.{filler}",
        "Sure.",
        user=OTHER,
        channel=OTHER_CHANNEL,
    )
    bucket.wait_for(PROFILE, lambda c: len(layout.profile_of(c).conversations) == 3)
    bucket.wait_for(OTHER_PROFILE, lambda c: len(layout.profile_of(c).conversations) == 1)
    # Sam's own memory (Claude's to write) lists Bob's thread as if it were Sam's.
    stolen = {"thread": bobs_thread, "title": "Q3 budget", "updated": "2099-01-01T00:00:00Z"}
    bucket.write(f"{person(USER).memory_prefix}sessions.json", json.dumps([stolen]))
    bucket.write(
        f"{person(USER).memory_prefix}search.json", bucket.read(person(OTHER).search_key) or ""
    )
    thread_ts, _ = open_thread(orion, slack)
    # Claude asks for the search, and even tries to name another person: ignored.
    claude.reply_tool_use("recall", {"query": "Q3 budget", "user_id": OTHER})
    before = len(main_requests(claude, orion))
    question = "What did we discuss about the Q3 budget last week?"
    ask(
        orion,
        slack,
        claude,
        thread_ts,
        question,
        "Last time we agreed to move batch jobs to spot instances.",
    )

    first, second = main_requests(claude, orion)[before : before + 2]
    assert "recall" in [tool["name"] for tool in first["tools"]]
    assert "`recall` tool" in system_text(first)
    [result] = second["messages"][-1]["content"]
    assert result["type"] == "tool_result" and not result.get("is_error")
    found = result_text(result)  # the search results, as text
    # Best match first (both words in its title), then the weaker one; the rest not at all.
    assert found.index("Q3 budget: cutting cloud spend") < found.index("Team offsite in Lisbon")
    assert own["cloud spend"] in found and time.strftime("%Y-%m-%d", time.gmtime()) in found
    assert "Hiring plan" not in found
    assert "sales team" not in found and bobs_thread not in found and "Bob" not in found
    [search] = spans.named("tool.recall")
    outcome = spans.attributes(search)["langfuse.observation.output"]
    # Only Orion's record of Sam's threads is searched: the forged list adds nothing.
    assert (outcome["indexed"], outcome["returned"]) == (3, 2)


# --- 4. memory switched off ------------------------------------------------------------------


def test_memory_switched_off_reads_and_writes_no_memory(
    bucket: Bucket,
    # Before Orion, whose GCS client talks to the emulator through this proxy (which logs
    # every call): set up first, stopped last.
    gcs_proxy: FaultyProxy,
    start_orion: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(preferences_key(USER), json.dumps({"name": "Sam"}))
    bucket.write(GLOBAL_KEY, "Kestrel Labs ships on Thursdays.")
    before = bucket.generations()
    orion = start_orion(memory_enabled=False)

    thread_ts, greeting = open_thread(orion, slack)
    assert greeting == GENERIC_GREETING
    for question in (
        "Call me Samuel. I prefer tables. Always use metric units.",
        "Now compare the Q3 budget with Q2 in detail, region by region, please.",
    ):
        reply = "Here is a detailed comparison, region by region, with Q2 and Q3 side by side."
        ask(orion, slack, claude, thread_ts, question, reply)
    # Every event handled to its end, and the background work each one started (where a
    # memory write would run) finished too.
    wait_until(
        lambda: len(orion.logged(log_events.SLACK_USER_MESSAGE_DONE)) == 2, 10, "both turns' end"
    )
    orion.wait_idle()

    # Only the retry-dedupe claims are new; every memory object is as it was, unwritten.
    after = bucket.generations()
    assert {k: v for k, v in after.items() if not k.startswith("events/")} == before
    claims = [key for key in after if key.startswith("events/")]
    # And nothing else was read or listed (not even the client library's bucket lookup):
    # one create-only upload per claimed event (uploads name the object in the body).
    uploads = [r for r in gcs_proxy.requests if r.method == "POST"]
    others = [r for r in gcs_proxy.requests if r.method != "POST"]
    assert len(uploads) == len(claims) == 3
    assert all("ifGenerationMatch=0" in r.path_qs for r in uploads)
    assert others == []
    # Claude got no memory, no memory tools, and no summary was asked for.
    assert claude.requests and claude.requests == main_requests(claude, orion)
    for request in claude.requests:
        assert "tools" not in request
        assert "<remembered_context>" not in system_text(request)


def test_what_was_said_in_passing_is_recalled_from_the_transcript_not_the_summary(
    start_orion: Callable[..., OrionServer],
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    # The summary model keeps the topic only; the puppy is said once, in passing.
    orion = start_orion()
    answer_summaries(claude, orion, lambda prompt: text(FIRST_SUMMARY))
    first_ts, _ = open_thread(orion, slack)
    ask(
        orion,
        slack,
        claude,
        first_ts,
        "Can you help me review our Q3 budget? Sorry, our puppy Biscuit chewed my charger.",
        "Sure. The biggest lever is moving batch jobs to spot instances.",
    )
    # The turn end indexed every message of the conversation as Orion keeps it.
    bucket.wait_for(person(USER).search_key, lambda c: "\tbiscuit," in c)
    assert "Biscuit" not in (summary_of_latest(bucket.read(PROFILE)) or "")

    thread_ts, _ = open_thread(orion, slack)
    claude.reply_tool_use("recall", {"query": "puppy chewed charger"})
    before = len(main_requests(claude, orion))
    ask(orion, slack, claude, thread_ts, "What's my puppy called?", "Biscuit.")
    _, second = main_requests(claude, orion)[before : before + 2]
    [result] = second["messages"][-1]["content"]
    found = [b for b in result["content"] if b["type"] == "search_result"]
    assert found[0]["title"].startswith("Q3 budget review (")
    assert "puppy Biscuit chewed my charger" in found[0]["content"][0]["text"]
    assert found[0]["citations"] == {"enabled": True}
