"""Thread start restores what Orion remembers, greets accordingly, and every turn carries it.

End to end through signed events: Orion over HTTP, the fake Slack and Claude, and the
memories either in a local directory or in the GCS emulator (behind a FaultyProxy where a
slow object matters). Assertions are about what the person sees (the greeting, the status
line), what Claude is sent (the system prompt) and what is traced — not about timings,
except the generous "greeted before the stalled object arrives" bound.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.memory.formatting import CHARS_PER_TOKEN, TRUNCATION_MARKER
from app.memory.paths import thread_context_key
from app.slack.greeting import GENERIC_GREETING
from app.slack.thread_started import RESTORING_STATUS
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings
from tests.span_log import SpanLog

USER, CHANNEL = "U0RETURN", "D0RETURN"
NEWBIE, NEWBIE_CHANNEL = "U0NEWBIE", "D0NEWBIE"
WARMUP_USER, WARMUP_CHANNEL = "U0WARMUP", "D0WARMUP"

PREFERENCES = {"response_style": "short answers", "timezone": "Europe/Berlin"}
GLOBAL_CONTEXT = "Kestrel Labs ships on Thursdays. The staging cluster is called heron."
SESSION_SUMMARY = "We compared Postgres and SQLite for the billing service; Postgres won."

GLOBAL_KEY = "global/context.md"
PREFERENCES_KEY = f"users/{USER}/preferences.json"
REMEMBERED = re.compile(r"<remembered_context>\n(.*)\n</remembered_context>", re.DOTALL)
# The first thread start of a test run builds the services (anthropic, google-cloud-storage
# imports: several seconds on a small machine); later waits are short.
FIRST_EVENT_TIMEOUT = 30.0


def session_key(thread_ts: str) -> str:
    """The session summary's key, as DESIGN.md §2 pins it."""
    return f"sessions/{thread_ts.replace('.', '-')}/context.md"


# --- memory backends --------------------------------------------------------------------


@dataclass
class Memories:
    """Where Orion keeps memories in one test, and a way to seed and inspect them directly."""

    settings: dict[str, Any]
    seed: Callable[[str, str], None]
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


def _gcs_memories(emulator: GcsEmulator, bucket: str) -> Memories:
    def seed(key: str, text: str) -> None:
        emulator.write(bucket, key, text)

    def read(key: str) -> str | None:
        data = emulator.read(bucket, key)
        return None if data is None else data.decode()

    return Memories({"gcs_memories_bucket": bucket}, seed, read)


@pytest.fixture(params=["local", "gcs"])
def memories(request: pytest.FixtureRequest, memory_dir: Path) -> Memories:
    if request.param == "local":
        return _local_memories(memory_dir)
    bucket: str = request.getfixturevalue("gcs_bucket")
    return _gcs_memories(request.getfixturevalue("gcs_emulator"), bucket)


@pytest.fixture
def local_memories(memory_dir: Path) -> Memories:
    return _local_memories(memory_dir)


@pytest.fixture
def gcs_memories(gcs_emulator: GcsEmulator, gcs_bucket: str) -> Memories:
    return _gcs_memories(gcs_emulator, gcs_bucket)


@pytest.fixture
def proxy(
    gcs_emulator: GcsEmulator, gcs_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FaultyProxy]:
    """A FaultyProxy in front of the emulator; Orion's GCS client talks to the proxy."""
    with FaultyProxy(gcs_emulator.url) as faulty:
        # Before any server starts: the client reads the variable when it is built.
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", faulty.url)
        yield faulty


@pytest.fixture
def start_orion(slack: FakeSlack, claude: FakeClaude) -> Iterator[Callable[..., OrionServer]]:
    """Start Orion with the given settings overrides; stopped at the end of the test."""
    with ExitStack() as stack:

        def start(memories: Memories, **overrides: Any) -> OrionServer:
            settings = make_settings(slack, claude, **memories.settings, **overrides)
            return stack.enter_context(OrionServer(settings))

        yield start


# --- what a person does, and what they see ---------------------------------------------


def open_thread(
    orion: OrionServer, slack: FakeSlack, user: str = USER, channel: str = CHANNEL
) -> str:
    thread_ts = slack.open_assistant_thread(channel)
    response = orion.post_event(events.assistant_thread_started(user, channel, thread_ts))
    assert response.status_code == 200
    return thread_ts


def wait_greeting(
    slack: FakeSlack, thread_ts: str, channel: str = CHANNEL, timeout: float = FIRST_EVENT_TIMEOUT
) -> str:
    [greeting] = slack.wait_for(
        lambda: slack.bot_messages(channel, thread_ts), timeout=timeout, what="the greeting"
    )
    return greeting.text


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
    ts = slack.add_user_message(channel, thread_ts, user, text)
    response = orion.post_event(
        events.user_message_in_thread(user, channel, thread_ts, text, ts=ts)
    )
    assert response.status_code == 200
    slack.wait_for(
        lambda: answer in _finished(slack, channel, thread_ts),
        timeout=FIRST_EVENT_TIMEOUT,
        what="Orion's answer",
    )
    [request] = [r for r in claude.requests if _is_turn_for(r, text)]
    return request


def _is_turn_for(body: dict[str, Any], text: str) -> bool:
    return last_user_text(body) == text


def _finished(slack: FakeSlack, channel: str, thread_ts: str) -> list[str]:
    return [m.text for m in slack.bot_messages(channel, thread_ts) if not m.streaming]


def remembered(request: dict[str, Any]) -> str:
    """The memory block of the system prompt Claude was sent (fails when there is none)."""
    blocks = [b["text"] for b in request["system"] if "<remembered_context>" in b["text"]]
    assert len(blocks) == 1, f"expected one memory block in {request['system']!r}"
    match = REMEMBERED.search(blocks[0])
    assert match is not None
    return match.group(1)


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
    thread_ts = open_thread(orion, slack, NEWBIE, NEWBIE_CHANNEL)

    assert wait_greeting(slack, thread_ts, NEWBIE_CHANNEL) == GENERIC_GREETING
    statuses = [update.status for update in slack.statuses(NEWBIE_CHANNEL, thread_ts)]
    assert statuses[0] == RESTORING_STATUS
    methods = [call.method for call in slack.calls]
    assert methods.index("assistant.threads.setStatus") < methods.index("chat.postMessage")
    prompts = slack.wait_for(lambda: slack.suggested_prompts(NEWBIE_CHANNEL, thread_ts))
    assert prompts[-1].prompts
    assert [call for call in slack.calls if call.error] == []
    # Nothing is invented for someone Orion has never met.
    assert memories.read(f"users/{NEWBIE}/preferences.json") is None


# --- 2. a returning user ----------------------------------------------------------------


def test_returning_user_is_welcomed_back_and_every_turn_carries_the_memory(
    start_orion: Callable[..., OrionServer],
    gcs_memories: Memories,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    seed_returning_user(gcs_memories)
    orion = start_orion(gcs_memories)
    thread_ts = open_thread(orion, slack)

    greeting = wait_greeting(slack, thread_ts)
    assert greeting.startswith("Welcome back")
    assert "short answers" in greeting
    # The restored memory is saved with the thread, in the bucket, for every later turn.
    saved = gcs_memories.read(thread_context_key(CHANNEL, thread_ts))
    assert saved is not None and "Europe/Berlin" in saved

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
        # Preferences come before the organisation's context.
        assert block.index("Europe/Berlin") < block.index(GLOBAL_CONTEXT)


# --- 3. one stalled scope ---------------------------------------------------------------


def test_a_stalled_object_does_not_hold_up_the_personalised_greeting(
    # The proxy first: set up before Orion, so it is stopped after Orion (whose GCS client
    # may still be retrying the stalled read) has shut down.
    proxy: FaultyProxy,
    start_orion: Callable[..., OrionServer],
    gcs_memories: Memories,
    slack: FakeSlack,
    spans: SpanLog,
) -> None:
    seed_returning_user(gcs_memories)
    orion = start_orion(gcs_memories, memory_load_timeout_s=1.0)
    # Build the services and the GCS client first, so the budget below is spent on the store.
    wait_greeting(slack, open_thread(orion, slack, WARMUP_USER, WARMUP_CHANNEL), WARMUP_CHANNEL)
    # One slow response only: the GCS client's own retry after its request timeout is quick.
    stall = proxy.add_rule(GLOBAL_KEY, delay=5.0, times=1)

    started = time.monotonic()
    thread_ts = open_thread(orion, slack)
    greeting = wait_greeting(slack, thread_ts, timeout=4.0)
    elapsed = time.monotonic() - started

    assert stall.hits == 1, "the global context download went through the stalled rule"
    assert elapsed < 5.0
    assert greeting.startswith("Welcome back") and "short answers" in greeting
    slack.wait_for(lambda: _load_outputs(spans, thread_ts), what="the memory load span")
    [outcome] = _load_outputs(spans, thread_ts)
    assert outcome["timed_out"] == ["global"]
    assert "user" in outcome["found"]
    # When the stalled object finally arrives, nothing more happens in the thread.
    slack.wait_for(
        lambda: any(r.rule == GLOBAL_KEY for r in proxy.requests),
        timeout=8.0,
        what="the stalled download to finish",
    )
    assert len(slack.bot_messages(CHANNEL, thread_ts)) == 1


def _load_outputs(spans: SpanLog, thread_ts: str) -> list[dict[str, Any]]:
    return [
        spans.attributes(span)["langfuse.observation.output"]
        for span in _of_thread(spans, "tool.memory.load", thread_ts)
    ]


# --- 4. a thread from before (no saved thread context) ----------------------------------


def test_an_old_thread_gets_its_session_summary_without_a_thread_start(
    start_orion: Callable[..., OrionServer],
    memories: Memories,
    slack: FakeSlack,
    claude: FakeClaude,
    spans: SpanLog,
) -> None:
    thread_ts = slack.open_assistant_thread(CHANNEL)
    memories.seed(session_key(thread_ts), SESSION_SUMMARY)
    orion = start_orion(memories)

    request = ask(orion, slack, claude, thread_ts, "Where did we land last time?")

    assert SESSION_SUMMARY in remembered(request)
    assert slack.bot_messages(CHANNEL, thread_ts)[0].text.startswith("Answer to: ")
    slack.wait_for(lambda: _of_thread(spans, "slack.user_message", thread_ts), what="the trace")
    [inject] = _of_thread(spans, "memory.context.inject", thread_ts)
    assert metadata(spans, inject, "source") == "reloaded"
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
    local_memories.seed(session_key(old_thread), "A long summary. " * 2000)
    orion = start_orion(local_memories, memory_context_token_budget=token_budget)

    new_thread = open_thread(orion, slack)
    assert "short answers" in wait_greeting(slack, new_thread)
    # Saved at thread start (new thread) and reloaded per turn (old thread): both in budget.
    for thread_ts in (new_thread, old_thread):
        request = ask(orion, slack, claude, thread_ts, f"Hello again in {thread_ts}")
        block = remembered(request)
        assert len(block) <= token_budget * CHARS_PER_TOKEN + 8
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
    thread_ts = open_thread(orion, slack)
    wait_greeting(slack, thread_ts)
    ask(orion, slack, claude, thread_ts, "What do you remember about me?")
    slack.wait_for(
        lambda: _of_thread(spans, "slack.user_message", thread_ts), what="the turn's root span"
    )

    [started] = _of_thread(spans, "slack.thread_started", thread_ts)
    [load] = _in_trace(spans, "tool.memory.load", started)
    attributes = spans.attributes(load)
    assert attributes["langfuse.observation.input"]["scopes"] == ["global", "user", "session"]
    outcome = attributes["langfuse.observation.output"]
    assert sorted(outcome["found"]) == ["global", "user"]
    assert outcome["missing"] == ["session"]
    assert outcome["failed"] == [] and outcome["timed_out"] == []

    # The turn used the memory saved with the thread: injected, not loaded again.
    [turn] = _of_thread(spans, "slack.user_message", thread_ts)
    [inject] = _in_trace(spans, "memory.context.inject", turn)
    assert _in_trace(spans, "tool.memory.load", turn) == []
    assert metadata(spans, inject, "source") == "thread_context"
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

    assert request["messages"] == [{"role": "user", "content": "Where did we land last time?"}]
