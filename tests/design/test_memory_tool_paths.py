"""The memory tool's model-visible paths (docs/interface.md, "The memory tool") in a real Slack
turn: serving person U in thread T, Claude is told its three directories, `view /memories`
shows exactly those (the organisation's, U's and T's), and what it writes under
`/memories/users/U/` and `/memories/sessions/T/` lands in U's home in the bucket."""

from __future__ import annotations

import re
from collections.abc import Callable

from app.memory.homes import person
from tests.e2e import conversation
from tests.e2e.conversation import main_requests, result_text, system_text, tool_results
from tests.e2e.memory_bucket import GLOBAL_KEY, Bucket
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, CHANNEL = "U0TOMAS", "D0TOMAS"
OTHER = "U0URSULA"
DONE = "Noted in your memory and this conversation's."


def test_claude_sees_and_writes_exactly_its_three_directories(
    orion_on_bucket: Callable[..., OrionServer],
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(GLOBAL_KEY, "Releases ship on Thursdays.")
    bucket.write(f"{person(OTHER).memory_prefix}notes.md", "Ursula's own note.")
    orion = orion_on_bucket()
    thread_ts, _ = conversation.open_thread(orion, slack, USER, CHANNEL)
    session = f"/memories/sessions/{thread_ts.replace('.', '-')}"
    mine = f"/memories/users/{USER}"

    claude.reply_tool_use(
        "memory", {"command": "create", "path": f"{mine}/role.md", "file_text": "SRE\n"}
    )
    claude.reply_tool_use(
        "memory", {"command": "create", "path": f"{session}/plan.md", "file_text": "Step 1\n"}
    )
    claude.reply_tool_use("memory", {"command": "view", "path": "/memories"})
    claude.reply_tool_use("memory", {"command": "view", "path": "/memories/global/context.md"})
    claude.reply(DONE)
    conversation.post_user_message(
        orion, slack, USER, CHANNEL, thread_ts, "I'm an SRE; plan the rollout with me."
    )
    conversation.wait_for_answer(slack, CHANNEL, thread_ts, DONE)

    requests = main_requests(claude, orion)
    guide = system_text(requests[0])
    for directory in ("/memories/global/", f"{mine}/", f"{session}/"):
        assert directory in guide
    results = [result_text(r) for request in requests for r in tool_results(request)]
    *_, listing, global_view = results
    listed = set(re.findall(r"\t(/memories/[^/\s]+/[^/\s]+)/?$", listing, re.MULTILINE))
    assert listed == {"/memories/global/context.md", mine, session}
    assert OTHER not in listing
    assert "Releases ship on Thursdays." in global_view

    home = person(USER)
    assert bucket.read(f"{home.memory_prefix}role.md") == "SRE\n"
    assert bucket.read(f"{home.notes_prefix(thread_ts)}plan.md") == "Step 1\n"
