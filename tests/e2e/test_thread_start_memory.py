"""Thread start restores what Orion remembers, greets accordingly, and every turn carries it.

End to end through signed events: Orion over HTTP, the fake Slack and Claude, and the
memories either in a local directory or in the GCS emulator (behind a FaultyProxy where a
slow object matters). Assertions are about what the person sees (the greeting, the status
line), what Claude is sent (the system prompt) and what is traced — not about timings,
except the generous "greeted before the stalled object arrives" bound.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.memory.formatting import TRUNCATION_MARKER
from app.memory.homes import person, preferences_key
from app.memory.token_estimate import estimate_tokens
from app.slack.assistant_view import RESTORING_STATUS
from app.slack.conversation.greeting import GENERIC_GREETING
from tests import layout
from tests.e2e import conversation
from tests.e2e.conversation import remembered
from tests.e2e.memory_bucket import GLOBAL_KEY, Bucket
from tests.fakes import claude_script as script
from tests.fakes.anthropic_api import FakeClaude, last_user_text, message_text
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, orion_servers
from tests.span_log import SpanLog

USER, CHANNEL = "U0RETURN", "D0RETURN"
NEWBIE, NEWBIE_CHANNEL = "U0NEWBIE", "D0NEWBIE"
WARMUP_USER, WARMUP_CHANNEL = "U0WARMUP", "D0WARMUP"

PREFERENCES = {"response_style": "short answers", "timezone": "Europe/Berlin"}
GLOBAL_CONTEXT = "Kestrel Labs ships on Thursdays. The staging cluster is called heron."
SESSION_SUMMARY = "We compared Postgres and SQLite for the billing service; Postgres won."

PREFERENCES_KEY = preferences_key(USER)
PROFILE_KEY = person(USER).profile_key


# --- memory backends --------------------------------------------------------------------


@dataclass
class Memories:
    """Where Orion keeps memories in one test, and a way to seed and inspect them directly."""

    settings: dict[str, Any]
    seed: Callable[[str, str], object]
    read: Callable[[str], str | None]


def _local_memories(directory: Path) -> Memories:
    def seed(key: str, text: str) -> None:
        path = directory / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def read(key: str) -> str | None:
        path = directory / key
        return path.read_text() if path.is_file() else None

    return Memories({"memory_dir": directory}, seed, read)


def _gcs_memories(bucket: Bucket) -> Memories:
    return Memories({"gcs_memories_bucket": bucket.name}, bucket.write, bucket.read)


@pytest.fixture(params=["local", "gcs"])
def memories(request: pytest.FixtureRequest, memory_dir: Path) -> Memories:
    if request.param == "local":
        return _local_memories(memory_dir)
    return _gcs_memories(request.getfixturevalue("bucket"))


@pytest.fixture
def local_memories(memory_dir: Path) -> Memories:
    return _local_memories(memory_dir)


@pytest.fixture
def gcs_memories(bucket: Bucket) -> Memories:
    return _gcs_memories(bucket)


@pytest.fixture
def start_orion(slack: FakeSlack, claude: FakeClaude) -> Iterator[Callable[..., OrionServer]]:
    """Start Orion with the given settings overrides; stopped at the end of the test."""
    with orion_servers(slack, claude) as start:

        def start_with(memories: Memories, **overrides: Any) -> OrionServer:
            return start(**memories.settings, **overrides)

        yield start_with


# --- what a person does, and what they see ---------------------------------------------


def open_thread(
    orion: OrionServer,
    slack: FakeSlack,
    user: str = USER,
    channel: str = CHANNEL,
    timeout: float = conversation.FIRST_EVENT_TIMEOUT,
) -> tuple[str, str]:
    """Open an assistant thread; returns its ts and Orion's greeting."""
    return conversation.open_thread(orion, slack, user, channel, timeout)


def ask(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    thread_ts: str,
    text: str,
    channel: str = CHANNEL,
    user: str = USER,
) -> dict[str, Any]:
    """Send a message in the thread, wait for Orion's finished answer; Claude's request.

    Claude answers the turn's request (the one ending with this message); anything else
    Orion asks it meanwhile (e.g. the after-turn session summary) gets the fake's echo.
    """
    answer = f"Answer to: {text}"
    claude.responder = lambda body: script.text(answer) if _is_turn_for(body, text) else None
    conversation.post_user_message(orion, slack, user, channel, thread_ts, text)
    conversation.wait_for_answer(slack, channel, thread_ts, answer)
    [request] = [r for r in claude.requests if _is_turn_for(r, text)]
    return request


def _is_turn_for(body: dict[str, Any], text: str) -> bool:
    return last_user_text(body) == text


def seed_returning_user(memories: Memories) -> None:
    memories.seed(PREFERENCES_KEY, json.dumps(PREFERENCES))
    memories.seed(GLOBAL_KEY, GLOBAL_CONTEXT)


def metadata(spans: SpanLog, span: Any, name: str) -> Any:
    # Langfuse stores each metadata value as JSON text.
    return json.loads(spans.attributes(span)[f"langfuse.observation.metadata.{name}"])


# --- 1. a new user ----------------------------------------------------------------------


def test_new_user_gets_the_generic_greeting_after_the_restoring_status(
    start_orion: Callable[..., OrionServer],
    memories: Memories,
    slack: FakeSlack,
) -> None:
    orion = start_orion(memories)
    thread_ts, greeting = open_thread(orion, slack, NEWBIE, NEWBIE_CHANNEL)

    assert greeting == GENERIC_GREETING
    statuses = [update.status for update in slack.statuses(NEWBIE_CHANNEL, thread_ts)]
    assert statuses[0] == RESTORING_STATUS
    methods = [call.method for call in slack.calls]
    assert methods.index("assistant.threads.setStatus") < methods.index("chat.postMessage")
    prompts = slack.wait_for(lambda: slack.suggested_prompts(NEWBIE_CHANNEL, thread_ts))
    assert prompts[-1].prompts
    assert [call for call in slack.calls if call.error] == []
    # Nothing is invented for someone Orion has never met.
    assert memories.read(preferences_key(NEWBIE)) is None


# --- 2. a returning user ----------------------------------------------------------------


def test_returning_user_is_welcomed_back_and_every_turn_carries_the_memory(
    start_orion: Callable[..., OrionServer],
    gcs_memories: Memories,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    seed_returning_user(gcs_memories)
    orion = start_orion(gcs_memories)
    thread_ts, greeting = open_thread(orion, slack)

    assert greeting.startswith("Welcome back")
    assert "short answers" in greeting
    # The thread start records the conversation as theirs (with Slack's context of the
    # thread): no copy of their memory, which every turn restores.
    record = slack.wait_for(
        lambda: gcs_memories.read(layout.conversation_key(USER, thread_ts)),
        what="the conversation's record in the bucket",
    )
    assert json.loads(record)["owner"]["user"] == USER
    assert "Europe/Berlin" not in record and "short answers" not in record

    for question in ("When do we ship?", "And what is staging called?"):
        request = ask(orion, slack, claude, thread_ts, question)
        fixed, *rest = request["system"]
        assert fixed["cache_control"] == {"type": "ephemeral"}
        assert "You are Orion" in fixed["text"]
        # The cached prefix must not change with the person: no memory in it.
        assert "short answers" not in fixed["text"] and GLOBAL_CONTEXT not in fixed["text"]
        memory_blocks = [b for b in rest if "<remembered_context>" in b["text"]]
        assert len(memory_blocks) == 1
        block = remembered(request)
        assert "short answers" in block and "Europe/Berlin" in block
        assert GLOBAL_CONTEXT in block
        # From the most stable to the most volatile (as the prompt around it, for the
        # cache): the organisation's context before the person's preferences.
        assert block.index(GLOBAL_CONTEXT) < block.index("Europe/Berlin")


# --- 3. one stalled scope ---------------------------------------------------------------


def test_a_stalled_object_does_not_hold_up_the_personalised_greeting(
    # The proxy first: set up before Orion, so it is stopped after Orion (whose GCS client
    # may still be retrying the stalled read) has shut down.
    gcs_proxy: FaultyProxy,
    start_orion: Callable[..., OrionServer],
    gcs_memories: Memories,
    slack: FakeSlack,
    spans: SpanLog,
) -> None:
    seed_returning_user(gcs_memories)
    orion = start_orion(gcs_memories, memory_load_timeout_s=1.0)
    # Build the services and the GCS client first, so the budget below is spent on the store.
    open_thread(orion, slack, WARMUP_USER, WARMUP_CHANNEL)
    # One response that never comes until the test says (the GCS client's own retry after
    # its request timeout goes through): the person's profile, how to greet them back;
    # their preferences still arrive.
    stall = gcs_proxy.add_rule(PROFILE_KEY, hold=True, times=1)

    thread_ts, greeting = open_thread(orion, slack)

    assert stall.hits == 1, "the profile's download went through the stalled rule"
    assert not [r for r in gcs_proxy.requests if r.rule == PROFILE_KEY], "greeted while stalled"
    assert greeting.startswith("Welcome back") and "short answers" in greeting
    slack.wait_for(lambda: _load_outputs(spans, thread_ts), what="the memory load span")
    [outcome] = _load_outputs(spans, thread_ts)
    assert outcome["timed_out"] == ["profile"]
    assert "user" in outcome["found"]
    # When the stalled object finally arrives, nothing more happens in the thread.
    stall.release()
    slack.wait_for(
        lambda: any(r.rule == PROFILE_KEY for r in gcs_proxy.requests),
        what="the stalled download to finish",
    )
    orion.wait_idle()
    assert len(slack.bot_messages(CHANNEL, thread_ts)) == 1


def _load_outputs(spans: SpanLog, thread_ts: str) -> list[dict[str, Any]]:
    return [
        spans.attributes(span)["langfuse.observation.output"]
        for span in _of_thread(spans, "tool.memory.load", thread_ts)
    ]


# --- 4. an earlier conversation (no thread start seen) --------------------------------------


def test_an_earlier_conversation_gets_its_summary_without_a_thread_start(
    start_orion: Callable[..., OrionServer],
    memories: Memories,
    slack: FakeSlack,
    claude: FakeClaude,
    spans: SpanLog,
) -> None:
    thread_ts = slack.open_assistant_thread(CHANNEL)
    # An earlier conversation of the person's, with its summary.
    memories.seed(
        layout.conversation_key(USER, thread_ts),
        layout.conversation(USER, thread_ts, channel_id=CHANNEL, summary=SESSION_SUMMARY),
    )
    orion = start_orion(memories)

    request = ask(orion, slack, claude, thread_ts, "Where did we land last time?")

    assert SESSION_SUMMARY in remembered(request)
    assert slack.bot_messages(CHANNEL, thread_ts)[0].text.startswith("Answer to: ")
    slack.wait_for(lambda: _of_thread(spans, "slack.user_message", thread_ts), what="the trace")
    [inject] = _of_thread(spans, "memory.context.inject", thread_ts)
    assert metadata(spans, inject, "source") == "restored"
    assert metadata(spans, inject, "injected") is True


# --- 5. memories larger than the budget --------------------------------------------------


def test_oversized_memories_are_cut_to_the_token_budget_with_a_marker(
    start_orion: Callable[..., OrionServer],
    local_memories: Memories,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    token_budget = 200
    local_memories.seed(PREFERENCES_KEY, json.dumps(PREFERENCES))
    huge = "Kestrel Labs handbook. " + "Every team writes things down. " * 1700  # ~50 KB
    local_memories.seed(GLOBAL_KEY, huge)
    old_thread = slack.open_assistant_thread(CHANNEL)
    local_memories.seed(
        layout.conversation_key(USER, old_thread),
        layout.conversation(
            USER, old_thread, channel_id=CHANNEL, summary="A long summary. " * 2000
        ),
    )
    orion = start_orion(local_memories, memory_context_token_budget=token_budget)

    new_thread, greeting = open_thread(orion, slack)
    assert "short answers" in greeting
    # Restored for every turn, in a new thread and in an old one: both in budget.
    for thread_ts in (new_thread, old_thread):
        request = ask(orion, slack, claude, thread_ts, f"Hello again in {thread_ts}")
        block = remembered(request)
        assert estimate_tokens(block) <= token_budget
        assert TRUNCATION_MARKER.strip() in block
        # Preferences have priority: they survive the cut whole.
        assert "short answers" in block and "Europe/Berlin" in block
        assert len(json.dumps(request["system"])) < 10_000


# --- 6. traces ------------------------------------------------------------------------------


def test_memory_load_and_injection_are_traced(
    start_orion: Callable[..., OrionServer],
    memories: Memories,
    slack: FakeSlack,
    claude: FakeClaude,
    spans: SpanLog,
) -> None:
    seed_returning_user(memories)
    orion = start_orion(memories)
    thread_ts, _ = open_thread(orion, slack)
    orion.wait_idle()
    ask(orion, slack, claude, thread_ts, "What do you remember about me?")
    slack.wait_for(
        lambda: _of_thread(spans, "slack.user_message", thread_ts), what="the turn's root span"
    )

    [started] = _of_thread(spans, "slack.thread_started", thread_ts)
    [load] = _in_trace(spans, "tool.memory.load", started)
    attributes = spans.attributes(load)
    # The thread has just opened: its conversation holds nothing yet, and is not read; the
    # greeting needs no organisation context.
    assert attributes["langfuse.observation.input"]["scopes"] == ["user", "profile"]
    outcome = attributes["langfuse.observation.output"]
    assert outcome["found"] == ["user"]
    assert outcome["missing"] == ["profile"]
    assert outcome["failed"] == [] and outcome["timed_out"] == []

    # The turn restored the memory beside its claim, with its conversation (whose it is,
    # its transcript and summary) and the person's profile.
    [turn] = _of_thread(spans, "slack.user_message", thread_ts)
    [inject] = _in_trace(spans, "memory.context.inject", turn)
    [load] = _in_trace(spans, "tool.memory.load", turn)
    assert spans.attributes(load)["langfuse.observation.input"]["scopes"] == [
        "user",
        "profile",
        "global",
        "conversation",
    ]
    assert metadata(spans, inject, "source") == "restored"
    assert metadata(spans, inject, "injected") is True
    assert metadata(spans, inject, "token_estimate") > 0


def _of_thread(spans: SpanLog, name: str, thread_ts: str) -> list[Any]:
    # Background work of an earlier test may still export spans: keep to this thread.
    return [s for s in spans.named(name) if spans.attributes(s).get("session.id") == thread_ts]


def _in_trace(spans: SpanLog, name: str, root: Any) -> list[Any]:
    return [s for s in spans.named(name) if s.context.trace_id == root.context.trace_id]


# --- known bug ------------------------------------------------------------------------------


def test_an_old_threads_turn_sends_claude_only_what_the_person_wrote(
    start_orion: Callable[..., OrionServer],
    local_memories: Memories,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    thread_ts = slack.open_assistant_thread(CHANNEL)
    orion = start_orion(local_memories)

    request = ask(orion, slack, claude, thread_ts, "Where did we land last time?")

    assert [message_text(m) for m in request["messages"]] == ["Where did we land last time?"]
