"""The organisation's context is read once per instance and shared (app/memory/shared_context.py),
through the GCS emulator: a burst of first messages makes one read of it (a thread start
none: the greeting does not use it); an operator's edit reaches the next conversation
once the copy is older than its bound; nothing personal is kept, so an erasure made
elsewhere (another instance, an operator) leaves nothing of the person in the next
conversation.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from typing import Any

from app.learning.erasure import forget_everything
from app.memory.homes import preferences_key
from app.memory.retention import SessionRetention
from app.memory.secret_free_store import kept
from app.slack.conversation.greeting import GENERIC_GREETING
from app.storage.gcs import GcsObjectStore
from tests import layout
from tests.e2e import conversation
from tests.e2e.memory_bucket import GLOBAL_KEY, Bucket
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, CHANNEL = "U0SHARE", "D0SHARE"
PREFERENCES = {"name": "Ines", "response_style": "tables please"}
FIRST_CONTEXT = "Kestrel Labs ships on Thursdays."
EDITED_CONTEXT = "Kestrel Labs now ships on Tuesdays."
MAX_AGE_S = 0.5


def _ask(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, thread_ts: str, text: str
) -> str:
    """Send a message in the thread; the memory block of Claude's request for it."""
    answer = f"Answer to: {text}"
    claude.responder = lambda body: script.text(answer) if last_user_text(body) == text else None
    conversation.post_user_message(orion, slack, USER, CHANNEL, thread_ts, text)
    conversation.wait_for_answer(slack, CHANNEL, thread_ts, answer)
    [request] = [r for r in claude.requests if last_user_text(r) == text]
    return conversation.remembered(request)


def _global_reads(proxy: FaultyProxy) -> list[Any]:
    return [r for r in proxy.requests if r.method == "GET" and "global%2Fcontext.md" in r.path_qs]


def test_a_burst_of_first_messages_reads_the_organisations_context_once(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(GLOBAL_KEY, FIRST_CONTEXT)
    orion = orion_on_bucket(memory_global_context_max_age_s=60)
    people = [(f"U0BURST{n}", f"D0BURST{n}") for n in range(8)]
    for user, _ in people:
        bucket.write(preferences_key(user), json.dumps({"name": f"Person {user[-1]}"}))
    threads = [conversation.open_thread(orion, slack, user, dm)[0] for user, dm in people]
    orion.wait_idle()
    # A greeting needs no organisation context: the thread starts did not read it.
    assert _global_reads(gcs_proxy) == []

    claude.responder = lambda body: script.text(f"Answer to: {last_user_text(body)}")
    gcs_proxy.add_rule("", delay=0.2)  # every read slow: the turns overlap
    for (user, dm), thread_ts in zip(people, threads, strict=True):
        question = f"When do we ship, {user}?"
        ts = slack.add_user_message(dm, thread_ts, user, question)
        message = events.user_message_in_thread(user, dm, thread_ts, question, ts)
        assert orion.post_event(message).status_code == 200
    for (user, dm), thread_ts in zip(people, threads, strict=True):
        conversation.wait_for_answer(slack, dm, thread_ts, f"Answer to: When do we ship, {user}?")

    # Each turn had its person's preferences and the organisation's context, read once
    # for all of them; nothing of it is kept with their conversations.
    for user, _ in people:
        [request] = [r for r in claude.requests if last_user_text(r).endswith(f"{user}?")]
        memory = conversation.remembered(request)
        assert f"Person {user[-1]}" in memory and FIRST_CONTEXT in memory
    assert len(_global_reads(gcs_proxy)) == 1
    orion.wait_idle()
    for (user, _), thread_ts in zip(people, threads, strict=True):
        assert FIRST_CONTEXT not in (bucket.read(layout.conversation_key(user, thread_ts)) or "")


def test_an_edit_of_the_organisations_context_reaches_the_next_conversation(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(GLOBAL_KEY, FIRST_CONTEXT)
    bucket.write(preferences_key(USER), json.dumps(PREFERENCES))
    orion = orion_on_bucket(memory_global_context_max_age_s=MAX_AGE_S)
    thread_ts, _ = conversation.open_thread(orion, slack, USER, CHANNEL)
    orion.wait_idle()
    assert FIRST_CONTEXT in _ask(orion, slack, claude, thread_ts, "When do we ship?")

    bucket.write(GLOBAL_KEY, EDITED_CONTEXT)  # an operator edits it in the bucket
    time.sleep(MAX_AGE_S + 0.1)  # the documented bound: the kept copy is now too old
    thread_ts, _ = conversation.open_thread(orion, slack, USER, CHANNEL)
    orion.wait_idle()

    block = _ask(orion, slack, claude, thread_ts, "And when do we ship now?")
    assert EDITED_CONTEXT in block and FIRST_CONTEXT not in block
    assert "tables please" in block, "the person's own preferences come along as before"


def test_an_erasure_made_elsewhere_leaves_nothing_personal_in_the_next_conversation(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    bucket: Bucket,
    gcs_bucket: str,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(GLOBAL_KEY, FIRST_CONTEXT)
    bucket.write(preferences_key(USER), json.dumps(PREFERENCES))
    # A long bound: whatever this instance keeps, it keeps for the rest of the test.
    orion = orion_on_bucket(memory_global_context_max_age_s=600)
    thread_ts, greeting = conversation.open_thread(orion, slack, USER, CHANNEL)
    assert greeting.startswith("Welcome back, Ines!")
    orion.wait_idle()
    assert "tables please" in _ask(orion, slack, claude, thread_ts, "What do I like?")
    orion.wait_idle()

    # Another instance (here: an operator's command on the same bucket) erases Ines.
    elsewhere = kept(GcsObjectStore(gcs_bucket), SessionRetention())
    asyncio.run(forget_everything(elsewhere, USER))

    thread_ts, greeting = conversation.open_thread(orion, slack, USER, CHANNEL)
    assert greeting == GENERIC_GREETING
    orion.wait_idle()
    block = _ask(orion, slack, claude, thread_ts, "Do you know me?")
    assert "Ines" not in block and "tables please" not in block
    assert FIRST_CONTEXT in block, "the organisation's context is nobody's: it stays"
