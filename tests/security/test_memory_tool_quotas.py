"""A turn cannot flood a person's memory, and a date no calendar holds is the model's
mistake, not Orion's.

Found by the attacker: one turn wrote 19.5 MiB in 606 storage operations (Claude looping
on the memory tool, each file at the 100 KB limit), and `recall` with `before: 9999-12-31`
raised an OverflowError, logged as an internal failure with its traceback. Played here
through signed events, Orion over HTTP with its memories in the GCS emulator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from app.memory.tool.access import MAX_BYTES_PER_DIRECTORY, MAX_FILE_BYTES
from app.memory.tool.scoped_tool import MAX_CALLS_PER_TURN
from tests import log_events
from tests.e2e import conversation
from tests.e2e.conversation import main_requests, result_text, tool_results
from tests.e2e.memory_bucket import Bucket
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.claude_script import new_tool_use_id
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, DM = "U0QUOTA01", "D0QUOTA01"
BIG = "q" * MAX_FILE_BYTES


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer]) -> OrionServer:
    # Memory must be there for these turns, however busy the machine running the tests.
    return orion_on_bucket(memory_load_timeout_s=10.0)


def _ask(orion: OrionServer, slack: FakeSlack, text: str, answer: str) -> None:
    thread_ts = slack.new_ts()
    conversation.post_user_message(orion, slack, USER, DM, thread_ts, text)
    conversation.wait_for_answer(slack, DM, thread_ts, answer, timeout=30)


def _creates(first: int, count: int) -> list[dict[str, Any]]:
    return [
        {
            "type": "tool_use",
            "id": new_tool_use_id(),
            "name": "memory",
            "input": {
                "command": "create",
                "path": f"/memories/users/{USER}/dump/{n:03d}.md",
                "file_text": BIG,
            },
        }
        for n in range(first, first + count)
    ]


def test_a_turn_looping_on_the_memory_tool_stops_at_the_quota_and_the_call_limit(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    for batch in range(2):
        claude.reply_blocks(_creates(batch * 20, 20))
    claude.reply("Stored what fitted.")

    _ask(orion, slack, "Save all of this, as many copies as you can.", "Stored what fitted.")

    results = [r for request in main_requests(claude, orion) for r in tool_results(request)]
    assert len(results) == 40
    fitted = MAX_BYTES_PER_DIRECTORY // MAX_FILE_BYTES  # 10 files of 100 KB in 1 MiB
    assert [r.get("is_error", False) for r in results[:fitted]] == [False] * fitted
    quota, limit = results[fitted:MAX_CALLS_PER_TURN], results[MAX_CALLS_PER_TURN:]
    assert all("may hold at most 1024 KB" in result_text(r) for r in quota)
    assert all(f"at most {MAX_CALLS_PER_TURN} memory commands" in result_text(r) for r in limit)
    kept = [name for name in bucket.names() if name.startswith(f"users/{USER}/dump/")]
    assert len(kept) == fitted
    assert sum(len(bucket.read(name) or "") for name in kept) <= MAX_BYTES_PER_DIRECTORY
    refused = [line for line in orion.logged(log_events.TOOL_MEMORY_CREATE) if not line["ok"]]
    assert len(refused) == 40 - fitted
    assert {line["severity"] for line in refused} == {"WARNING"}
    assert orion.logged(log_events.TOOL_FAILED) == []


def test_a_recall_date_past_the_calendar_is_a_tool_error_not_a_failure(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    claude.reply_tool_use("recall", {"query": "budget", "before": "9999-12-31"})
    claude.reply_tool_use("recall", {"query": "budget", "after": "0001-01-01"})
    claude.reply("I could not narrow it down by date.")

    _ask(
        orion,
        slack,
        "What did we say about the budget, ever?",
        "I could not narrow it down by date.",
    )

    results = [r for request in main_requests(claude, orion) for r in tool_results(request)]
    assert [r.get("is_error") for r in results] == [True, True]
    assert "`before` must be a day from 1970-01-01 to 9999-12-30" in result_text(results[0])
    assert "`after` must be a day from 1970-01-01 to 9999-12-30" in result_text(results[1])
    assert orion.logged(log_events.TOOL_FAILED) == []
