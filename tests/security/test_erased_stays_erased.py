"""Erased stays erased, and nothing the person can write decides whose memory Orion touches.

Each attack of the trust issue, played end to end: the real Orion HTTP app, the fake Slack
and fake Claude, memories in the GCS emulator. Every test ends by reading the whole
bucket: nothing of the erased person (their id, their words), everything of the other.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from app.learning.timestamps import format_time
from app.memory.homes import person, preferences_key
from app.slack.home.memory_view import ACTION_FORGET_EVERYTHING
from tests import layout, log_events
from tests.e2e import conversation
from tests.e2e.conversation import open_thread
from tests.e2e.home import click, open_home, shown
from tests.e2e.memory_bucket import Bucket
from tests.e2e.test_memory_controls import (
    DM,
    OTHER,
    OTHER_DM,
    OTHER_THREAD,
    THREAD,
    UPDATED,
    USER,
    everything_in,
    left_of,
    mira,
    otto,
    seed,
)
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, orion_servers

# Deeper than Python's recursion limit: json.loads answers RecursionError.
NESTED = "[" * 50_000 + "]" * 50_000
WRONG_SECTIONS = json.dumps(
    {"welcome": {"thread": {"$ne": 1}}, "settings": "on", "said_in": [[1, 2]]}
)


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
    """Of Mira, only her erasure's mark (her profile, holding when it was); Otto's objects
    as they were."""
    assert left_of(bucket, USER) == {}
    left = everything_in(bucket)
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
    # The conversation's record (with Slack's context of the thread) went again.
    assert seeded.read(layout.conversation_key(USER, thread_ts)) is None
    nothing_of_mira_and_all_of_otto(seeded, otto_before)


def test_a_memory_tool_write_by_a_turn_that_then_fails_is_erased_again(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    otto_before = ottos_objects(seeded)
    thread_ts, _ = open_thread(orion, slack, USER, DM)
    # Claude's answer waits while Mira erases everything; then Claude saves a note with
    # the memory tool (after the erasure's deletions) and its next call fails.
    answering = claude.hold()
    note = {"command": "create", "path": f"/memories/users/{USER}/tea.md", "file_text": "Mira: tea"}
    claude.reply_tool_use("memory", note)
    claude.fail(status=500, error_type="api_error", message="boom")
    calls = len(claude.calls)
    conversation.post_user_message(orion, slack, USER, DM, thread_ts, "I'm Mira, I like tea.")
    claude.wait_for(lambda: len(claude.calls) > calls, what="the turn's first Claude call")
    forget_everything(orion, slack)
    answering.set()

    conversation.wait_for_messages(slack, DM, thread_ts, 1, after_greeting=True, timeout=30)
    orion.wait_logged(log_events.MEMORY_ERASED_DURING_EVENT, timeout=30)
    orion.wait_idle()
    assert seeded.read(f"{person(USER).memory_prefix}tea.md") is None
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
    profile_key = person(USER).profile_key
    seeded.wait_for(profile_key, lambda content: thread_ts in content)
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
    profile = seeded.wait_for(profile_key, lambda content: thread_ts in content)
    assert [entry.thread_ts for entry in layout.profile_of(profile).conversations] == [thread_ts]
    summary = layout.summary_of_latest(profile) or ""
    assert "venue" in summary.lower()
    # Nor does the conversation's own object hold anything from before the erasure.
    kept = seeded.read(layout.conversation_key(USER, thread_ts)) or ""
    for before_erasure in ("billing", "Dana", "Friday"):
        assert before_erasure not in summary, before_erasure
        assert before_erasure not in kept, before_erasure

    forget_everything(orion, slack)
    orion.wait_idle()
    nothing_of_mira_and_all_of_otto(seeded, otto_before)


def test_a_thread_listed_in_the_persons_own_files_is_never_theirs_to_forget(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    otto_before = ottos_objects(seeded)
    thread_ts, _ = open_thread(orion, slack, USER, DM)
    # Mira has Claude write a "profile" listing Otto's thread among her own files, and try
    # to write Orion's own records of her (her profile, her search index) and Otto's
    # conversation; then she asks Claude to forget that conversation, and erases all.
    forged = {
        "version": 2,
        "conversations": [
            {
                "thread": OTHER_THREAD,
                "title": "x",
                "updated": format_time(UPDATED),
                "channel": OTHER_DM,
            }
        ],
    }
    writes = {
        f"/memories/users/{USER}/profile.json": json.dumps(forged),
        f"/memories/people/{USER}/profile.json": json.dumps(forged),
        f"/memories/people/{USER}/search.json": json.dumps(
            {"version": 1, "complete": True, "docs": [[OTHER_THREAD, 1, "x"]]}
        ),
        f"/memories/users/{USER}/../../people/{OTHER}/conversations/"
        f"{OTHER_THREAD.replace('.', '-')}.json": "{}",
    }
    for path, text in writes.items():
        claude.reply_tool_use("memory", {"command": "create", "path": path, "file_text": text})
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
    assert any("'..'" in text for text in results), results
    assert any("no conversation" in text for text in results), results
    # Her own "profile" is only a note of hers; Orion's profile of her is untouched by it.
    orion.wait_idle()
    assert seeded.read(f"{person(USER).memory_prefix}profile.json") == json.dumps(forged)
    profile = layout.profile_of(seeded.read(person(USER).profile_key))
    assert profile.entry(OTHER_THREAD) is None
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
    home = person(USER)
    for key in (
        home.profile_key,
        home.search_key,
        preferences_key(USER),
        home.conversation_key(THREAD),
        f"{home.memory_prefix}sessions.json",
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
    erasing.wait_logged(log_events.MEMORY_ERASED_DURING_EVENT, timeout=30)
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
        # Claude's answer waits while Mira erases everything; then Claude saves a note and
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
        seeded.wait_for(f"{person(USER).memory_prefix}tea.md", timeout=30)
        streamed = agent_slack.wait_for(
            lambda: [m for m in agent_slack.bot_messages(DM, ts) if m.text],
            timeout=30,
            what="the answer streaming",
        )
        stop = events.agent_session_stopped(USER, DM, ts, [streamed[0].ts])
        assert orion.post_event(stop).status_code == 200
        rest.set()

        orion.wait_logged(log_events.MEMORY_ERASED_DURING_EVENT, timeout=30)
        orion.wait_idle()
        assert orion.logged(log_events.SLACK_TURN_STOPPED)
        nothing_of_mira_and_all_of_otto(seeded, otto_before)


# --- the erasure guard: what a turn writes after its person was forgotten is taken back ------


# Long enough, with the question, to be summarised and indexed at the turn's end.
TEA_ANSWER = "Noted, Mimi: tea it is. I saved it so I remember it in our next conversations."
FRIDAY_ANSWER = "Friday it is, Mira. I'll remind you to tell the whole team about the new date."
PLAN_ANSWER = "Here to help: ship the billing page on Friday, copy first, then the team review."


def written_since(proxy: FaultyProxy, moment: float) -> set[str]:
    """The objects Orion wrote (the store said so) in requests that began after `moment`."""
    return {
        r.upload_name
        for r in proxy.requests
        if r.upload_name is not None and r.status == 200 and r.started >= moment
    }


def test_an_erasure_during_a_turn_takes_back_everything_the_turn_writes_after_it(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    seeded: Bucket,
    gcs_proxy: FaultyProxy,
) -> None:
    otto_before = ottos_objects(seeded)
    home = person(USER)
    thread_ts, _ = open_thread(orion, slack, USER, DM)
    orion.wait_idle()
    # The turn is in flight while Mira erases everything: Claude's first answer waits, and
    # so does the write of the preference her message states (captured at once, beside
    # the answer). Then Claude saves a note, answers, and the turn ends — its transcript,
    # summary, search entry and profile: every write after the erasure.
    captured = gcs_proxy.hold(
        f"ifGenerationMatch={seeded.generations()[preferences_key(USER)]}", method="POST"
    )
    answering = claude.hold()
    note = {"command": "create", "path": f"/memories/users/{USER}/tea.md", "file_text": "Mimi: tea"}
    claude.reply_tool_use("memory", note)
    claude.reply(TEA_ANSWER)
    claude.reply("# Tea\nMimi drinks tea; Orion noted it.")  # the turn end's summary
    calls = len(claude.calls)
    conversation.post_user_message(
        orion, slack, USER, DM, thread_ts, "Please call me Mimi. I drink tea, note that."
    )
    claude.wait_for(lambda: len(claude.calls) > calls, what="the turn's first Claude call")
    forget_everything(orion, slack)
    erased = time.monotonic()
    captured.set()
    answering.set()

    conversation.wait_for_answer(slack, DM, thread_ts, TEA_ANSWER)
    orion.wait_logged(log_events.MEMORY_ERASED_DURING_EVENT, timeout=30)
    orion.wait_idle()
    # Each of these was written after the erasure (so no erasure's listing saw it) …
    assert {
        f"{home.memory_prefix}tea.md",
        preferences_key(USER),
        home.conversation_key(thread_ts),
        home.search_key,
    } <= written_since(gcs_proxy, erased)
    # … and taken back by the turn's own settle: nothing of hers is left, and her profile
    # is still only the erasure's mark (no conversation listed, no welcome, no summary).
    assert left_of(seeded, USER) == {}
    assert [key for key, content in everything_in(seeded).items() if "Mimi" in content] == []
    nothing_of_mira_and_all_of_otto(seeded, otto_before)


def test_a_turn_end_settling_as_the_erasure_lands_writes_no_profile_back(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    seeded: Bucket,
    gcs_proxy: FaultyProxy,
) -> None:
    otto_before = ottos_objects(seeded)
    thread_ts, _ = open_thread(orion, slack, USER, DM)
    orion.wait_idle()
    profile_key = person(USER).profile_key
    # The turn end's one write of Mira's profile (her conversation listed, the welcome back
    # with the new summary) is kept waiting; meanwhile she erases everything, so the
    # erasure writes its mark over the very version the turn end read.
    settling = gcs_proxy.hold(
        f"ifGenerationMatch={seeded.generations()[profile_key]}", method="POST"
    )
    summarized: list[str] = []

    def respond(body: dict[str, Any]) -> script.ScriptItem | None:
        if body["model"] != orion.settings.summary_model:
            return script.text(FRIDAY_ANSWER)
        summarized.append("yes")
        return script.text("# Launch\nMira moved the launch to Friday.")

    claude.responder = respond
    conversation.post_user_message(
        orion, slack, USER, DM, thread_ts, "Move the launch to Friday, and tell the whole team."
    )
    conversation.wait_for_answer(slack, DM, thread_ts, FRIDAY_ANSWER)
    claude.wait_for(lambda: summarized, what="the turn end's summary")
    forget_everything(orion, slack)
    settling.set()

    orion.wait_logged(log_events.MEMORY_ERASED_DURING_EVENT, timeout=30)
    orion.wait_idle()
    mark = layout.profile_of(seeded.read(profile_key))
    assert mark.erased_at is not None and mark.conversations == () and mark.sections == {}
    nothing_of_mira_and_all_of_otto(seeded, otto_before)


@pytest.mark.parametrize(
    "hostile",
    [
        NESTED,
        json.dumps({"version": 2, "conversations": ["x" * 1_000] * 5_000}),  # huge
        json.dumps({"erased_at": 17, "forgotten": [], "conversations": {"a": 1}}),  # wrong types
        json.dumps(["not", "an", "object"]),
        WRONG_SECTIONS,
    ],
    ids=["nested", "huge", "wrong-types", "a-list", "wrong-sections"],
)
def test_a_hostile_conversation_or_profile_section_is_read_as_empty_and_fails_no_turn(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket, hostile: str
) -> None:
    otto_before = ottos_objects(seeded)
    home = person(USER)
    # Sections of the wrong shapes are read as absent. (A profile that cannot be read whole
    # is never written over: tests/security/test_unreadable_profile.py.)
    seeded.write(home.profile_key, WRONG_SECTIONS)
    seeded.write(home.conversation_key(THREAD), hostile)

    # A new thread: greeted, answered, and the turn ends with her profile made sound again.
    thread_ts, greeting = open_thread(orion, slack, USER, DM)
    assert greeting, "a greeting all the same"
    claude.reply(PLAN_ANSWER)
    conversation.post_user_message(
        orion, slack, USER, DM, thread_ts, "Let's plan the billing page launch for Friday."
    )
    conversation.wait_for_answer(slack, DM, thread_ts, PLAN_ANSWER)
    profile = seeded.wait_for(home.profile_key, lambda content: thread_ts in content)
    assert layout.profile_of(profile).entry(thread_ts) is not None
    # The old thread whose object is hostile: answered, as a conversation of her own.
    claude.reply("Back in the old thread.")
    conversation.post_user_message(orion, slack, USER, DM, THREAD, "And this thread?")
    conversation.wait_for_answer(slack, DM, THREAD, "Back in the old thread.")
    orion.wait_idle()
    kept = layout.messages_in(seeded.read(home.conversation_key(THREAD)))
    assert kept == ["And this thread?", "Back in the old thread."], "kept afresh, readable"
    assert not orion.logged(log_events.SLACK_USER_MESSAGE_FAILED)
    assert "Forget everything" in shown(open_home(orion, slack, USER, DM))

    forget_everything(orion, slack)
    orion.wait_idle()
    nothing_of_mira_and_all_of_otto(seeded, otto_before)


def test_a_message_sent_before_the_erasure_is_not_kept_when_its_profile_read_lands_after(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    seeded: Bucket,
    gcs_proxy: FaultyProxy,
) -> None:
    otto_before = ottos_objects(seeded)
    view = open_home(orion, slack, USER, DM)
    # Mira writes, then at once erases everything; storage is slow, so the turn's read of
    # her profile lands after the erasure's mark (it reads the mark: nothing "since").
    reading = gcs_proxy.hold("people%2FU0MIRA%2Fprofile.json", method="GET")
    claude.reply("Sure, the launch moves to Friday and the team hears it from you.")
    claude.reply("# Launch\nMira moved the launch to Friday.")  # the turn end's summary
    conversation.post_user_message(
        orion, slack, USER, DM, THREAD, "Move the launch to Friday, and tell the whole team."
    )
    before = len(orion.logged(log_events.MEMORY_FORGET))
    click(orion, slack, USER, view, ACTION_FORGET_EVERYTHING)
    slack.wait_for(lambda: len(orion.logged(log_events.MEMORY_FORGET)) > before, what="erasure")
    reading.set()

    conversation.wait_for_messages(slack, DM, THREAD, 1, after_greeting=False, timeout=30)
    orion.wait_idle()
    assert [key for key, text in everything_in(seeded).items() if "Friday" in text] == []
    nothing_of_mira_and_all_of_otto(seeded, otto_before)
