"""What Orion does with memory while it answers, shown with Slack's task display, end to end.

Orion over HTTP against the fake Slack and Claude, in both experiences. Mira has talked to
Orion before: her memory holds the summaries of two conversations and her conversation
index. She asks; Claude searches her past conversations (`recall`) and saves a note (the
memory tool). What the tests read is what Mira sees in her DM: the answer, and the tasks
of the streamed message (`FakeSlack.tasks`: each task's final state, with its sources).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from app.learning.conversation_record import TranscriptMessage, said
from tests import layout
from tests.e2e import both_experiences
from tests.e2e.conversation import finished, open_thread, post_user_message, wait_for_answer
from tests.e2e.memory_bucket import Bucket
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack, Task
from tests.orion_server import OrionServer, make_settings

# Each test runs in both experiences (the fake Slack speaks the one under test).
experience = both_experiences.experience
slack = both_experiences.slack


USER, DM = "U0MIRA", "D0MIRA"
WORKSPACE = "https://orion-test.slack.com"  # the fake's auth.test answers it
LISBON = ("1770000000.000100", "Offsite venue in Lisbon", "Picked the Alfama venue for June.")
BUDGET = ("1770000500.000200", "Q3 budget review", "Cut cloud costs by a fifth.")
QUERY = "offsite venue Lisbon"
NOTE = {
    "command": "create",
    "path": f"/memories/users/{USER}/offsite.md",
    "file_text": "Offsite: the Alfama venue, in June.\n",
}
ANSWER = "We picked the Alfama venue in Lisbon for June; I noted it for next time."
QUESTION = "Where did we decide to hold the offsite?"
STOPPED = "Stopped. Ask again whenever you're ready."

RESTORE = "Restoring what I remember about you"
SEARCH = f"Searching past conversations for “{QUERY}”"
SAVE = "Saving offsite.md"


def history(
    user: str,
    dm: str,
    threads: list[tuple[str, str, str]],
    messages: dict[str, list[TranscriptMessage]] | None = None,
) -> dict[str, str]:
    """The objects a person's past conversations left (`messages`: the transcripts of
    some): each conversation, the profile listing them, the search index over them."""
    now = datetime.now(UTC).replace(microsecond=0)
    return layout.history(
        [
            layout.conversation_record(
                user,
                thread,
                channel_id=dm,
                summary=body,
                title=title,
                at=now - timedelta(days=len(threads) - n),
            ).with_messages((messages or {}).get(thread, []))
            for n, (thread, title, body) in enumerate(threads)
        ]
    )


def seed(memory_dir: Path, objects: dict[str, str]) -> None:
    for key, content in objects.items():
        path = memory_dir / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def link(channel: str, thread_ts: str) -> str:
    return f"{WORKSPACE}/archives/{channel}/p{thread_ts.replace('.', '')}"


@pytest.fixture
def orion(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path, experience: str
) -> Iterator[OrionServer]:
    seed(memory_dir, history(USER, DM, [LISBON, BUDGET]))
    settings = make_settings(slack, claude, memory_dir=memory_dir, slack_experience=experience)
    with OrionServer(settings) as server:
        yield server


def ask(orion: OrionServer, slack: FakeSlack, experience: str, question: str) -> str:
    """Mira asks in a new conversation; returns its thread."""
    if experience == "assistant":
        thread_ts, _ = open_thread(orion, slack, USER, DM)
        post_user_message(orion, slack, USER, DM, thread_ts, question)
        return thread_ts
    ts = slack.add_user_message(DM, None, USER, question)
    assert orion.post_event(events.top_level_dm(USER, DM, question, ts=ts)).status_code == 200
    return ts


def answer_with(claude: FakeClaude, orion: OrionServer, *steps: script.ScriptItem) -> None:
    """Claude's answering model takes `steps`, in order (then answers ANSWER); the summary
    model, writing in the background after each answer, takes none of them."""
    queue = list(steps)

    def respond(body: dict[str, Any]) -> script.ScriptItem:
        if body["model"] != orion.settings.anthropic_model:
            return script.text("A short summary.")
        return queue.pop(0) if queue else script.text(ANSWER)

    claude.responder = respond


def tasks_by_title(slack: FakeSlack, thread_ts: str) -> dict[str, Task]:
    return {task.title: task for task in slack.tasks(DM, thread_ts)}


def test_restoring_searching_and_saving_show_as_tasks_that_finish_with_the_threads_found(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, experience: str
) -> None:
    answer_with(
        claude,
        orion,
        script.tool_use("recall", {"query": QUERY}),
        script.tool_use("memory", NOTE),
    )

    thread_ts = ask(orion, slack, experience, QUESTION)
    wait_for_answer(slack, DM, thread_ts, ANSWER)

    tasks = tasks_by_title(slack, thread_ts)
    assert list(tasks) == [RESTORE, SEARCH, SAVE]
    assert (tasks[RESTORE].status, tasks[RESTORE].output) == (
        "complete",
        "Nothing saved about you yet",
    )
    search, save = tasks[SEARCH], tasks[SAVE]
    assert search.status == "complete" and search.output is not None
    assert search.output.startswith("Found ")
    # The conversation found first is the Lisbon one, linked to its own thread.
    assert search.sources[0] == {"type": "url", "url": link(DM, LISBON[0]), "text": LISBON[1]}
    assert all(source["url"].startswith(f"{WORKSPACE}/archives/{DM}/") for source in search.sources)
    assert (save.status, save.output) == ("complete", "Saved")
    # One streamed message: the tasks in a plan, and the answer whole.
    [message] = [m for m in slack.bot_messages(DM, thread_ts) if m.chunks]
    assert message.task_display_mode == "plan" and message.text == ANSWER
    assert {"type": "plan_update", "title": "Working with my memory"} in message.chunks
    # The tasks show the work: no status line says it a second time.
    statuses = [update.status for update in slack.statuses(DM, thread_ts)]
    assert "is looking through past conversations..." not in statuses


def test_a_workspace_without_the_task_display_gets_the_status_line_and_is_not_asked_again(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, experience: str
) -> None:
    slack.refuse_task_display("feature_not_enabled")
    for turn in (1, 2):
        answer_with(claude, orion, script.tool_use("recall", {"query": QUERY}))
        # The first time, Claude's tool call comes once Slack has refused the tasks: what
        # decides where the progress shows is that refusal, not which answer came first.
        held = claude.hold() if turn == 1 else None
        thread_ts = ask(orion, slack, experience, QUESTION)
        if held is not None:
            slack.wait_for(
                lambda: [c for c in slack.calls if c.error == "feature_not_enabled"],
                what="Slack's refusal of the task display",
            )
            held.set()
        wait_for_answer(slack, DM, thread_ts, ANSWER)
        assert slack.tasks(DM, thread_ts) == []
        if experience == "assistant":
            statuses = [update.status for update in slack.statuses(DM, thread_ts)]
            assert "is looking through past conversations..." in statuses

    # Refused once, remembered: the second answer streamed as plain text from its start.
    refused = [c for c in slack.calls if c.error == "feature_not_enabled"]
    assert len(refused) == 1
    assert all(
        "chunks" not in c.args and "task_display_mode" not in c.args
        for c in slack.calls
        if c.method.endswith("Stream") and c.error is None
    )


def test_one_malformed_call_does_not_turn_the_task_display_off_for_the_workspace(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, experience: str
) -> None:
    """Slack answers `invalid_arguments` to any bad call: that answer streams as text, and
    the next one shows its tasks again."""
    slack.inject_error("chat.startStream", "invalid_arguments", status=200, times=1)
    answer_with(claude, orion, script.tool_use("recall", {"query": QUERY}))
    first = ask(orion, slack, experience, QUESTION)
    wait_for_answer(slack, DM, first, ANSWER)
    [refused] = [c for c in slack.calls if c.error == "invalid_arguments"]
    assert "chunks" in refused.args, "the call refused was one carrying tasks"

    answer_with(claude, orion, script.tool_use("recall", {"query": QUERY}))
    second = ask(orion, slack, experience, QUESTION)
    wait_for_answer(slack, DM, second, ANSWER)

    assert list(tasks_by_title(slack, second)) == [RESTORE, SEARCH]


def test_fifty_tool_calls_stay_a_short_list_in_a_few_slack_calls(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, experience: str
) -> None:
    views = [
        {
            "type": "tool_use",
            "id": script.new_tool_use_id(),
            "name": "memory",
            "input": {"command": "view", "path": f"/memories/users/{USER}/note-{n}.md"},
        }
        for n in range(50)
    ]
    answer_with(claude, orion, script.Reply(views, stop_reason="tool_use"))

    thread_ts = ask(orion, slack, experience, QUESTION)
    wait_for_answer(slack, DM, thread_ts, ANSWER)

    tasks = slack.tasks(DM, thread_ts)
    assert len(tasks) == 12, "the restore, ten calls, and one task for the other forty"
    assert tasks[-1].title == "40 more memory steps" and tasks[-1].status == "complete"
    assert all(task.status == "complete" for task in tasks)
    streamed = [c for c in slack.calls if c.method.endswith("Stream")]
    assert len(streamed) <= 6, [c.method for c in streamed]
    assert len(slack.statuses(DM, thread_ts)) <= 3


def test_storage_down_shows_what_could_not_be_done_and_the_answer_still_comes(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
    experience: str,
) -> None:
    for key, content in history(USER, DM, [LISBON, BUDGET]).items():
        bucket.write(key, content)
    orion = orion_on_bucket(slack_experience=experience, memory_load_timeout_s=0.5)
    gcs_proxy.add_rule("", status=503)  # the bucket is down
    answer_with(claude, orion)

    thread_ts = ask(orion, slack, experience, QUESTION)
    wait_for_answer(slack, DM, thread_ts, ANSWER, timeout=60)

    # Nothing says whose the conversation is: the restore shows it could not be done, and
    # Claude is offered no memory to search or write (so nothing claims it found or saved).
    tasks = tasks_by_title(slack, thread_ts)
    assert tasks[RESTORE].status == "error"
    assert all("found" not in (task.output or "").lower() for task in tasks.values())
    [request] = [r for r in claude.requests if r["model"] == orion.settings.anthropic_model]
    assert "tools" not in request


@pytest.mark.parametrize("experience", ["agent"])
def test_a_stop_during_a_slow_search_leaves_no_task_in_progress(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
    experience: str,
) -> None:
    for key, content in history(USER, DM, [LISBON, BUDGET]).items():
        bucket.write(key, content)
    orion = orion_on_bucket(slack_experience="agent")
    answer_with(claude, orion, script.tool_use("recall", {"query": QUERY}))
    gcs_proxy.add_rule(layout.person(USER).search_key, delay=20)  # her index takes its time

    thread_ts = ask(orion, slack, experience, QUESTION)

    def searching() -> Any:
        return [t for t in slack.tasks(DM, thread_ts) if t.title == SEARCH]

    slack.wait_for(searching, timeout=30, what="the search shown in progress")
    assert orion.post_event(events.agent_session_stopped(USER, DM, thread_ts)).is_success
    slack.wait_for(
        lambda: "Stopped. Ask again whenever you're ready." in finished(slack, DM, thread_ts)
    )
    gcs_proxy.clear_rules()

    # The stream is ended as Slack answers its last call: maybe just after the confirmation.
    [search] = slack.wait_for(
        lambda: (found := searching()) and found[0].status != "in_progress" and found,
        what="the search no longer in progress",
    )
    assert (search.status, search.output) == ("error", "Stopped before it finished")
    assert all(task.status != "in_progress" for task in slack.tasks(DM, thread_ts))
    assert ANSWER not in finished(slack, DM, thread_ts)


def test_a_detail_said_once_in_passing_is_found_cited_and_linked_to_its_message(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    experience: str,
    memory_dir: Path,
) -> None:
    # The Lisbon conversation as Orion keeps it: its transcript holds a detail the summary
    # left out (app/learning/conversation_record.py), and so does its search entry.
    said_at = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
    mention = "1770000001.000300"
    transcript = [
        said("user", "Can we pick the offsite venue?", at=said_at, ts=LISBON[0]),
        said(
            "user", "Sorry, our puppy Biscuit chewed the projector cable.", at=said_at, ts=mention
        ),
        said(
            "assistant",
            "The Alfama venue has a spare projector.",
            at=said_at,
            ts="1770000002.000400",
        ),
    ]
    seed(memory_dir, history(USER, DM, [LISBON, BUDGET], {LISBON[0]: transcript}))
    question = "What is the puppy called that chewed the projector cable?"
    answer_with(
        claude,
        orion,
        script.tool_use("recall", {"query": "puppy chewed projector cable"}),
        script.cited("It's Biscuit.", link(DM, LISBON[0]), LISBON[1], "Biscuit"),
    )

    thread_ts = ask(orion, slack, experience, question)
    wait_for_answer(slack, DM, thread_ts, "It's Biscuit.")

    # Claude got the conversation as a citable search result: its link, title and dates,
    # and the message that holds the detail, with who said it and when.
    [_, cited] = [r for r in claude.requests if r["model"] == orion.settings.anthropic_model]
    [result] = [b for b in cited["messages"][-1]["content"] if b["type"] == "tool_result"]
    found = [b for b in result["content"] if b["type"] == "search_result"]
    assert found[0]["source"] == link(DM, LISBON[0])
    assert found[0]["title"].startswith(f"{LISBON[1]} ({said_at:%Y-%m-%d}")
    assert found[0]["citations"] == {"enabled": True}
    [passage] = [p["text"] for p in found[0]["content"] if "puppy Biscuit chewed" in p["text"]]
    assert passage.startswith("The person wrote on ")
    # The person sees the conversation and the message it came from as sources.
    search = tasks_by_title(slack, thread_ts)[
        "Searching past conversations for “puppy chewed projector cable”"
    ]
    assert search.sources[0]["url"] == link(DM, LISBON[0])
    message_link = f"{link(DM, mention)}?thread_ts={LISBON[0]}&cid={DM}"
    quoted = [s for s in search.sources if s["url"] == message_link]
    assert quoted and "Biscuit" in quoted[0]["text"]
