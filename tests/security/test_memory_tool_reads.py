"""Claude as the attacker, reading: one turn cannot hand Claude more memory than its next request
can carry.

Found by the attacker (round 9): a memory file may hold 100 KB, and a turn may make 30 memory
commands, all in one response. Thirty `view`s of one 100 KB file of emoji (two tokens each)
came back whole: about 1.5 million tokens in Orion's next request, over any Claude model's
context window, which the API refuses ("prompt is too long"); the turn failed instead of the
model being told. Reads now have a budget per turn, like writes: past it, a view is an error
result that says so, and the person gets Claude's answer. Played through signed events, Orion
over HTTP with its memories in the GCS emulator.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.memory.homes import person
from app.memory.token_estimate import estimate_tokens
from app.memory.tool.access import MAX_FILE_BYTES
from app.memory.tool.scoped_tool import MAX_CALLS_PER_TURN, MAX_READ_TOKENS_PER_TURN
from tests import log_events
from tests.e2e import conversation
from tests.e2e.conversation import main_requests, result_text, tool_results
from tests.e2e.memory_bucket import Bucket
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.claude_script import new_tool_use_id
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, DM = "U0READS01", "D0READS01"
# A memory file at its size limit, two tokens a character to Claude's tokenizer.
EMOJI_NOTE = "\U0001f680" * (MAX_FILE_BYTES // 4)
ANSWER = "I read what one turn allows."


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer]) -> OrionServer:
    return orion_on_bucket(memory_load_timeout_s=10.0)


def test_a_turn_viewing_a_large_file_over_and_over_gets_error_results_not_a_failed_turn(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    bucket.write(f"{person(USER).memory_prefix}rockets.md", EMOJI_NOTE)
    path = f"/memories/users/{USER}/rockets.md"
    view = {"command": "view", "path": path}
    claude.reply_blocks(
        [
            {"type": "tool_use", "id": new_tool_use_id(), "name": "memory", "input": view}
            for _ in range(MAX_CALLS_PER_TURN)
        ]
    )
    claude.reply(ANSWER)

    thread_ts = slack.new_ts()
    conversation.post_user_message(orion, slack, USER, DM, thread_ts, "Read me my notes.")
    conversation.wait_for_answer(slack, DM, thread_ts, ANSWER, timeout=30)

    results = tool_results(main_requests(claude, orion)[-1])
    assert len(results) == MAX_CALLS_PER_TURN
    shown = [r for r in results if not r.get("is_error")]
    refused = [r for r in results if r.get("is_error")]
    assert shown and refused, "the first views are shown, the rest refused"
    assert all(EMOJI_NOTE[:100] in result_text(r) for r in shown)
    assert all("this turn has read all the memory" in result_text(r) for r in refused)
    # What the next request carries of memory stays within the budget, whatever the model asks.
    assert sum(estimate_tokens(result_text(r)) for r in shown) <= MAX_READ_TOKENS_PER_TURN
    assert orion.logged(log_events.TOOL_FAILED) == []
    # The file itself is untouched.
    assert bucket.read(f"{person(USER).memory_prefix}rockets.md") == EMOJI_NOTE
