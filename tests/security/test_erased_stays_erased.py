"""Erased stays erased, and nothing the person can write decides whose memory Orion touches.

Each attack of the trust issue, played end to end: the real Orion HTTP app, the fake Slack
and fake Claude, memories in the GCS emulator. Every test ends by reading the whole
bucket: nothing of the erased person (their id, their words), everything of the other.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator

import pytest

from app.learning.timestamps import format_time
from app.memory.scopes import (
    conversations_index_key,
    session_context_key,
    thread_context_key,
    user_preferences_key,
    user_prefix,
    welcome_key,
)
from app.slack.home.memory_view import ACTION_FORGET_EVERYTHING
from tests import log_events
from tests.e2e import conversation
from tests.e2e.conversation import open_thread
from tests.e2e.memory_bucket import Bucket
from tests.e2e.test_memory_controls import (
    DM,
    OTHER,
    OTHER_DM,
    OTHER_THREAD,
    UPDATED,
    USER,
    click,
    everything_in,
    mira,
    open_home,
    otto,
    seed,
    shown,
)
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, orion_servers

# Deeper than Python's recursion limit: json.loads answers RecursionError.
NESTED = "[" * 50_000 + "]" * 50_000


@pytest.fixture
def seeded(bucket: Bucket) -> Bucket:
    seed(bucket, mira())
    seed(bucket, otto())
    return bucket


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], seeded: Bucket) -> OrionServer:
    return orion_on_bucket()


def ottos_objects(bucket: Bucket) -> dict[str, str]:
    """Otto's memory as it is now: nothing Mira does may change it."""
    return {key: bucket.read(key) or "" for key in otto()}


def forget_everything(orion: OrionServer, slack: FakeSlack) -> None:
    """Mira presses Forget everything (confirmed) and the erasure completes."""
    before = len(orion.logged(log_events.MEMORY_FORGET))
    click(orion, slack, USER, open_home(orion, slack, USER, DM), ACTION_FORGET_EVERYTHING)
    slack.wait_for(lambda: len(orion.logged(log_events.MEMORY_FORGET)) > before, what="the erasure")


def nothing_of_mira_and_all_of_otto(bucket: Bucket, otto_before: dict[str, str]) -> None:
    left = everything_in(bucket)
    assert [key for key, content in left.items() if USER in key or USER in content] == []
    assert [key for key, content in left.items() if "Mira" in content] == []
    assert {key: left.get(key) for key in otto_before} == otto_before, "Otto's memory is his"


def test_a_thread_start_that_restored_before_the_erasure_saves_none_of_it_after(
    orion: OrionServer, slack: FakeSlack, seeded: Bucket
) -> None:
    otto_before = ottos_objects(seeded)
    # The greeting is out (it knew Mira); the thread start is held just before it saves
    # the restored memory with the thread, and Mira erases everything meanwhile.
    held = slack.hold("assistant.threads.setSuggestedPrompts")
    thread_ts, greeting = open_thread(orion, slack, USER, DM)
    assert greeting.startswith("Bon retour, Mira !"), "in her language, French"
    forget_everything(orion, slack)
    held.set()

    orion.wait_logged(log_events.SLACK_CONVERSATION_ERASED_SINCE_START)
    orion.wait_idle()
    assert seeded.read(thread_context_key(DM, thread_ts)) is None
    nothing_of_mira_and_all_of_otto(seeded, otto_before)


def test_a_memory_tool_write_by_a_turn_that_then_fails_is_erased_again(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    otto_before = ottos_objects(seeded)
    thread_ts, _ = open_thread(orion, slack, USER, DM)
    # Claude is slow to answer; Mira erases everything meanwhile; then Claude saves a note
    # with the memory tool (after the erasure's deletions) and its next call fails.
    claude.delay(4)
    note = {"command": "create", "path": f"/memories/users/{USER}/tea.md", "file_text": "Mira: tea"}
    claude.reply_tool_use("memory", note)
    claude.fail(status=500, error_type="api_error", message="boom")
    calls = len(claude.calls)
    conversation.post_user_message(orion, slack, USER, DM, thread_ts, "I'm Mira, I like tea.")
    claude.wait_for(lambda: len(claude.calls) > calls, what="the turn's first Claude call")
    forget_everything(orion, slack)

    conversation.wait_for_messages(slack, DM, thread_ts, 1, after_greeting=True, timeout=30)
    orion.wait_logged(log_events.MEMORY_ERASED_DURING_TURN, timeout=30)
    orion.wait_idle()
    assert seeded.read(f"{user_prefix(USER)}tea.md") is None
    nothing_of_mira_and_all_of_otto(seeded, otto_before)


def test_a_same_day_follow_up_after_the_erasure_is_indexed_and_summarises_only_what_came_after(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    otto_before = ottos_objects(seeded)
    thread_ts, _ = open_thread(orion, slack, USER, DM)
    claude.reply("Sure: the billing page ships on Friday, and Dana writes the copy for it.")
    conversation.post_user_message(
        orion, slack, USER, DM, thread_ts, "Remind me: what is the billing launch plan with Dana?"
    )
    seeded.wait_for(conversations_index_key(USER), lambda content: thread_ts in content)
    orion.wait_idle()
    forget_everything(orion, slack)
    nothing_of_mira_and_all_of_otto(seeded, otto_before)

    # Back in the old thread, the same day: the thread is Mira's again, listed (so the Home
    # tab shows it and the next erasure finds it), and its summary holds only the new part.
    claude.reply("Ask Priya about the offsite venue first, then book it for the whole team.")
    conversation.post_user_message(
        orion,
        slack,
        USER,
        DM,
        thread_ts,
        "New topic: the offsite venue, who should I ask about it?",
    )
    orion.wait_idle()
    index = seeded.wait_for(conversations_index_key(USER), lambda content: thread_ts in content)
    assert [entry["thread"] for entry in json.loads(index)] == [thread_ts]
    summary = seeded.wait_for(session_context_key(thread_ts))
    assert "venue" in summary.lower()
    for before_erasure in ("billing", "Dana", "Friday"):
        assert before_erasure not in summary, before_erasure

    forget_everything(orion, slack)
    orion.wait_idle()
    nothing_of_mira_and_all_of_otto(seeded, otto_before)


def test_a_thread_listed_in_the_persons_own_files_is_never_theirs_to_forget(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    otto_before = ottos_objects(seeded)
    thread_ts, _ = open_thread(orion, slack, USER, DM)
    # Mira has Claude list Otto's thread where the index used to live, and try to write
    # Orion's own records; then she asks Claude to forget that conversation, and erases all.
    forged = [{"thread": OTHER_THREAD, "title": "x", "updated": format_time(UPDATED)}]
    claude.reply_tool_use(
        "memory",
        {
            "command": "create",
            "path": f"/memories/users/{USER}/sessions.json",
            "file_text": json.dumps([{**forged[0], "channel": OTHER_DM}]),
        },
    )
    claude.reply_tool_use(
        "memory",
        {
            "command": "create",
            "path": f"/memories/people/{USER}/conversations.json",
            "file_text": json.dumps(forged),
        },
    )
    claude.reply_tool_use(
        "memory",
        {
            "command": "create",
            "path": f"/memories/people/{USER}/search.json",
            "file_text": json.dumps(
                {"version": 1, "complete": True, "docs": [[OTHER_THREAD, 1, "x"]]}
            ),
        },
    )
    claude.reply_tool_use("forget", {"kind": "conversation", "id": OTHER_THREAD})
    claude.reply("Done.")
    conversation.post_user_message(orion, slack, USER, DM, thread_ts, "Forget Otto's thread.")
    conversation.wait_for_messages(slack, DM, thread_ts, 1, after_greeting=True, timeout=30)
    results = [
        conversation.result_text(result)
        for request in conversation.main_requests(claude, orion)
        for result in conversation.tool_results(request)
    ]
    denied = [text for text in results if text.startswith("Access denied: /memories/people/")]
    assert len(denied) == 2, results
    assert any("no conversation" in text for text in results), results
    assert {key: seeded.read(key) or "" for key in otto()} == otto_before
    view = open_home(orion, slack, USER, DM)
    # Her forged list is only a file of hers: Otto's conversation is not shown as hers.
    assert "Roadmap" not in shown(view) and f"/archives/{OTHER_DM}/" not in json.dumps(view)

    forget_everything(orion, slack)
    orion.wait_idle()
    nothing_of_mira_and_all_of_otto(seeded, otto_before)


def test_malformed_records_and_files_block_neither_the_greeting_nor_the_controls(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    otto_before = ottos_objects(seeded)
    for key in (
        conversations_index_key(USER),
        welcome_key(USER),
        user_preferences_key(USER),
        f"{user_prefix(USER)}sessions.json",
    ):
        seeded.write(key, NESTED)

    thread_ts, greeting = open_thread(orion, slack, USER, DM)
    assert greeting, "a greeting all the same"
    claude.reply_tool_use("recall", {"query": "billing launch"})
    claude.reply("I could not find it.")
    conversation.post_user_message(orion, slack, USER, DM, thread_ts, "What did we plan?")
    [answer] = conversation.wait_for_messages(slack, DM, thread_ts, 1, after_greeting=True)
    assert answer == "I could not find it."
    assert "Forget everything" in shown(open_home(orion, slack, USER, DM))
    assert orion.logged(log_events.MEMORY_FILE_UNREADABLE)

    forget_everything(orion, slack)
    orion.wait_idle()
    nothing_of_mira_and_all_of_otto(seeded, otto_before)
    assert OTHER in json.dumps(everything_in(seeded))


def test_an_erasure_on_a_second_instance_undoes_a_turn_finishing_on_the_first(
    orion_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    seeded: Bucket,
) -> None:
    otto_before = ottos_objects(seeded)
    answering, erasing = orion_on_bucket(), orion_on_bucket()
    thread_ts, _ = open_thread(answering, slack, USER, DM)
    # An answer on the first instance still being written while Mira's click reaches the
    # second one.
    rest = threading.Event()
    claude.reply("Noted, Mira. " * 40, held=rest)
    conversation.post_user_message(
        answering, slack, USER, DM, thread_ts, "Please call me Mira. Let's plan the launch again."
    )
    slack.wait_for(lambda: slack.calls_to("chat.startStream"), what="the answer to start")
    forget_everything(erasing, slack)
    rest.set()

    # (Servers in one process share one log: the last one started collects it.)
    erasing.wait_logged(log_events.MEMORY_ERASED_DURING_TURN, timeout=30)
    answering.wait_idle()
    erasing.wait_idle()
    nothing_of_mira_and_all_of_otto(seeded, otto_before)


@pytest.fixture
def agent_slack() -> Iterator[FakeSlack]:
    with FakeSlack(agent_view=True) as fake:
        yield fake


def test_a_stopped_turn_takes_back_what_the_memory_tool_wrote_after_an_erasure(
    gcs_proxy: FaultyProxy,
    agent_slack: FakeSlack,
    claude: FakeClaude,
    seeded: Bucket,
    gcs_bucket: str,
) -> None:
    otto_before = ottos_objects(seeded)
    with orion_servers(agent_slack, claude, gcs_memories_bucket=gcs_bucket) as start:
        orion = start(slack_experience="agent")
        # Claude is slow to start; Mira erases everything; then Claude saves a note and
        # streams a long answer, which Mira stops.
        erased, rest = threading.Event(), threading.Event()
        note = {"command": "create", "path": f"/memories/users/{USER}/tea.md", "file_text": "tea"}
        claude.reply_tool_use("memory", note, waits_for=erased)
        claude.reply("Here is a long plan. " * 20, held=rest)
        text = "I'm Mira and I like tea; plan my week."
        ts = agent_slack.add_user_message(DM, None, USER, text)
        assert orion.post_event(events.top_level_dm(USER, DM, text, ts=ts)).status_code == 200
        claude.wait_for(lambda: claude.calls, what="the turn's first Claude call")
        forget_everything(orion, agent_slack)
        erased.set()
        seeded.wait_for(f"{user_prefix(USER)}tea.md", timeout=30)
        streamed = agent_slack.wait_for(
            lambda: [m for m in agent_slack.bot_messages(DM, ts) if m.text],
            timeout=30,
            what="the answer streaming",
        )
        stop = events.agent_session_stopped(USER, DM, ts, [streamed[0].ts])
        assert orion.post_event(stop).status_code == 200
        rest.set()

        orion.wait_logged(log_events.MEMORY_ERASED_DURING_TURN, timeout=30)
        orion.wait_idle()
        assert orion.logged(log_events.SLACK_TURN_STOPPED)
        nothing_of_mira_and_all_of_otto(seeded, otto_before)
