"""Attacker's review of the turn end under an erasure: a turn end whose own writes fail
(storage refusing the person's search index) must still settle with the erasure guard,
or what the turn's memory tool wrote after the erasure's deletions outlives the erasure. Played
end to end: the real Orion HTTP app, fake Slack and Claude, the GCS emulator behind a
faulty proxy."""

from __future__ import annotations

from app.memory.homes import person
from tests import log_events
from tests.e2e import conversation
from tests.e2e.conversation import open_thread
from tests.e2e.memory_bucket import Bucket
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import orion_servers
from tests.security.test_erased_stays_erased import (
    DM,
    USER,
    forget_everything,
    nothing_of_mira_and_all_of_otto,
    ottos_objects,
    seeded,  # noqa: F401 (fixture)
)


def test_a_turn_end_that_fails_to_write_still_takes_back_what_the_turn_wrote_after_an_erasure(
    gcs_proxy: FaultyProxy,
    slack: FakeSlack,
    claude: FakeClaude,
    seeded: Bucket,  # noqa: F811 (fixture)
    gcs_bucket: str,
) -> None:
    otto_before = ottos_objects(seeded)
    with orion_servers(slack, claude, gcs_memories_bucket=gcs_bucket) as start:
        orion = start()
        thread_ts, _ = open_thread(orion, slack, USER, DM)
        # Claude's answer waits while Mira erases everything; then Claude saves a note
        # with the memory tool (after the erasure's deletions) and answers.
        answering = claude.hold()
        note = {"command": "create", "path": f"/memories/users/{USER}/tea.md", "file_text": "tea"}
        claude.reply_tool_use("memory", note)
        claude.reply("Noted: you like tea. " + "Here is a week planned around it. " * 8)
        text = "I'm Mira, I like tea. Please remember it and plan my week around it."
        conversation.post_user_message(orion, slack, USER, DM, thread_ts, text)
        claude.wait_for(lambda: claude.calls, what="the turn's first Claude call")
        forget_everything(orion, slack)
        # From now on storage refuses her search index: the turn end fails to write it.
        gcs_proxy.add_rule(person(USER).search_key, status=503, method="GET")
        answering.set()
        note_key = f"{person(USER).memory_prefix}tea.md"
        seeded.wait_for(note_key, timeout=30)

        orion.wait_logged(log_events.MEMORY_AFTER_TURN_FAILED, timeout=60)
        orion.wait_idle()
        gcs_proxy.clear_rules()
        assert seeded.read(note_key) is None, "outlived the erasure"
        nothing_of_mira_and_all_of_otto(seeded, otto_before)
