"""The task display shows a person only their own conversations, and nothing the model or
the person wrote can run long, break lines, reverse text, mention or link in it.

Mira and Otto each held a conversation about the Lisbon offsite; Mira's profile lists
hers with hostile channel values (a record from an older version, a bug, a hand edit).
Mira asks; Claude searches and then reads memory files with hostile names. What the tests
read is every chunk the fake Slack received (what Slack would show).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.agent.memory_task import MemoryTask, TaskSource
from app.memory.homes import person
from app.slack.conversation.task_display import task_chunk
from app.slack.conversation.thread_links import ThreadLinks
from tests.e2e import both_experiences
from tests.e2e.conversation import wait_for_answer
from tests.e2e.test_task_display import (
    ANSWER,
    DM,
    LISBON,
    QUERY,
    USER,
    WORKSPACE,
    answer_with,
    ask,
    history,
    link,
    seed,
)
from tests.fakes import claude_script as script
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings

# Each test runs in both experiences (the fake Slack speaks the one under test).
experience = both_experiences.experience
slack = both_experiences.slack

OTHER, OTHER_DM = "U0OTTO", "D0OTTO"
OTTOS = ("1770000000.000900", "Offsite venue in Lisbon", "Otto booked a hotel in Lisbon.")
HOSTILE_CHANNELS = ("javascript:alert(1)", "D0MIRA|<!channel>", "https://evil.example/x")
HOSTILE = [
    (f"1770000100.0001{n:02d}", f"Offsite venue in Lisbon, copy {n}", "The Lisbon offsite again.")
    for n in range(len(HOSTILE_CHANNELS))
]
# A file name and a search as hostile as the model (or a person, through it) can make them.
HOSTILE_NAME = "<!channel> [click](https://evil.example)\n\u202eevil\u200b" + "x" * 5_000
HOSTILE_QUERY = "<@U0OTTO> " * 4_000 + "\u2066Lisbon\n\n<!here>"


@pytest.fixture
def orion(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path, experience: str
) -> Iterator[OrionServer]:

    mira = history(USER, DM, [LISBON, *HOSTILE])
    profile = json.loads(mira[person(USER).profile_key])
    for entry in profile["conversations"]:
        for (thread, _, _), channel in zip(HOSTILE, HOSTILE_CHANNELS, strict=True):
            if entry["thread"] == thread:
                entry["channel"] = channel
    seed(memory_dir, {**mira, person(USER).profile_key: json.dumps(profile)})
    seed(memory_dir, history(OTHER, OTHER_DM, [OTTOS]))
    settings = make_settings(slack, claude, memory_dir=memory_dir, slack_experience=experience)
    with OrionServer(settings) as server:
        yield server


def sent_chunks(slack: FakeSlack) -> list[dict[str, Any]]:
    streams = [c for c in slack.calls if c.method.endswith("Stream") and c.error is None]
    return [chunk for call in streams for chunk in call.args.get("chunks") or []]


def test_sources_are_only_the_persons_own_threads_and_only_slack_links(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, experience: str
) -> None:
    answer_with(claude, orion, script.tool_use("recall", {"query": QUERY, "limit": 10}))

    thread_ts = ask(orion, slack, experience, "Where is the offsite?")
    wait_for_answer(slack, DM, thread_ts, ANSWER)

    [search] = [t for t in slack.tasks(DM, thread_ts) if t.title.startswith("Searching")]
    assert search.status == "complete"
    # Her Lisbon conversations, each linked to her DM (as her search index and each
    # conversation's object say), whatever her profile's entries say of their channels.
    urls = [source["url"] for source in search.sources]
    assert link(DM, LISBON[0]) in urls
    assert set(urls) <= {link(DM, thread) for thread, _, _ in [LISBON, *HOSTILE]}
    assert search.output == f"Found {1 + len(HOSTILE)} conversations"
    everything = json.dumps(sent_chunks(slack))
    # Otto's conversation, on the same topic, is nowhere in what Mira's thread was sent.
    assert OTTOS[0] not in everything and OTTOS[0].replace(".", "") not in everything
    assert OTHER_DM not in everything and "hotel" not in everything
    for hostile in ("javascript", "evil.example", "<!channel>"):
        assert hostile not in everything
    for chunk in sent_chunks(slack):
        for source in chunk.get("sources") or []:
            assert source["url"].startswith(f"{WORKSPACE}/archives/{DM}/p")


def test_hostile_file_names_and_searches_make_short_plain_titles(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, experience: str
) -> None:
    view = {"command": "view", "path": f"/memories/users/{USER}/{HOSTILE_NAME}"}
    answer_with(
        claude,
        orion,
        script.tool_use("recall", {"query": HOSTILE_QUERY}),
        script.tool_use("memory", view),
    )

    thread_ts = ask(orion, slack, experience, "Look this up.")
    wait_for_answer(slack, DM, thread_ts, ANSWER)

    tasks = slack.tasks(DM, thread_ts)
    assert len(tasks) == 3 and all(task.status != "in_progress" for task in tasks)
    for chunk in sent_chunks(slack):
        if chunk["type"] != "task_update":
            continue
        for text in (chunk["title"], chunk.get("output") or ""):
            assert len(text) <= 256
            assert "\n" not in text and "\u202e" not in text and "\u2066" not in text
            assert "\u200b" not in text
            assert "<" not in text and ">" not in text, "mentions and links escaped"
            assert "](" not in text, "no Markdown link"
    titles = [task.title for task in tasks]
    assert titles[1].startswith("Searching past conversations for “&lt;@U0OTTO&gt;")
    # The file's name is what follows its path's last slash, flattened and cut short.
    assert titles[2].startswith("Reading evil.example) evilxxx") and titles[2].endswith("…")


def test_a_task_title_at_slacks_limit_is_cut_without_breaking_an_escape() -> None:
    title = "&" * 300  # every character grows fivefold when escaped
    links = ThreadLinks("https://orion-test.slack.com/", "T1")
    source = TaskSource("1770000000.000100", "javascript:alert(1)", "bad channel")
    chunk = task_chunk(MemoryTask("t", title, "complete", "<" * 300, (source,)), links).to_dict()

    assert len(chunk["title"]) <= 256 and chunk["title"].endswith("&amp;…")
    assert len(chunk["output"]) <= 256 and chunk["output"].endswith("&lt;…")
    assert "sources" not in chunk, "a channel that is not Slack's gets no link"
