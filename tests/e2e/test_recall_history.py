"""`recall` over a long history in several languages, end to end.

Orion over HTTP against the fake Slack and Claude, memories in the GCS emulator. Mira has
talked to Orion 64 times in the last four weeks: her home holds her profile listing them,
each conversation with its summary, and her search index over them, as the turn ends
wrote them. Claude asks `recall`; what the test reads is the tool result Claude was sent
(what it answers the person from) and the objects in the bucket.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from app.memory.homes import person
from tests import layout
from tests.e2e import conversation
from tests.e2e.conversation import open_thread
from tests.e2e.memory_bucket import Bucket
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, DM = "U0MIRA", "D0MIRA"
OTHER, OTHER_DM = "U0OTTO", "D0OTTO"
NOW = datetime.now(UTC).replace(microsecond=0)
CONVERSATIONS = 64
# The oldest of Mira's conversations, and two she held in Russian and in Japanese.
OLDEST = ("1770000000.000000", "Offsite venue in Lisbon", "Picked the Alfama venue for June.")
RUSSIAN = (
    "1770000020.000020",
    "Бюджет на маркетинг",
    "Обсудили бюджет на маркетинг: урезать рекламу в соцсетях на треть.",
)
JAPANESE = (
    "1770000040.000040",
    "予算会議の準備",
    "来期の予算会議に向けて、クラウド費用の削減案をまとめた。",
)
OTTOS = ("1770009999.000001", "Offsite venue in Lisbon", "Otto booked a hotel in Lisbon.")


def mira_threads() -> list[tuple[str, str, str]]:
    threads = [
        (f"{1_770_000_000 + n}.{n:06d}", f"Weekly sync {n}", f"Status round number {n}.")
        for n in range(CONVERSATIONS)
    ]
    for special in (OLDEST, RUSSIAN, JAPANESE):
        n = int(special[0].split(".")[1])
        threads[n] = special
    return threads


def write_history(bucket: Bucket, user: str, dm: str, threads: list[tuple[str, str, str]]) -> None:
    """Each conversation with its summary, the profile listing them and the search index
    over them, oldest first over 28 days (as the turn ends wrote them)."""
    step = timedelta(days=28) / len(threads)
    records = [
        layout.conversation_record(
            user,
            thread,
            channel_id=dm,
            summary=body,
            title=title,
            at=NOW - timedelta(days=28) + n * step,
        )
        for n, (thread, title, body) in enumerate(threads)
    ]
    for key, content in layout.history(records).items():
        bucket.write(key, content)


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], bucket: Bucket) -> OrionServer:
    write_history(bucket, USER, DM, mira_threads())
    write_history(bucket, OTHER, OTHER_DM, [OTTOS])
    return orion_on_bucket()


def recall(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    *queries: str,
    said: str = "What did we decide?",
) -> list[str]:
    """Mira asks (`said`); Claude calls `recall` once per query; returns each tool result."""
    thread_ts, _ = open_thread(orion, slack, USER, DM)
    for query in queries:
        claude.reply_tool_use("recall", {"query": query})
    claude.reply("Here is what I found.")
    before = len(conversation.main_requests(claude, orion))
    conversation.post_user_message(orion, slack, USER, DM, thread_ts, said)
    conversation.wait_for_messages(slack, DM, thread_ts, 1, after_greeting=True, timeout=30)
    requests = conversation.main_requests(claude, orion)[before:]
    results = [conversation.tool_results(request) for request in requests[1:]]
    assert all(not r.get("is_error") for found in results for r in found), results
    return [conversation.result_text(found[0]) for found in results]


def first_hit(result: str) -> str:
    return next(line for line in result.splitlines() if line.startswith("1. "))


def test_the_oldest_of_64_conversations_is_found_by_its_topic_and_never_another_persons(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    [found] = recall(orion, slack, claude, "the offsite venue in Lisbon")
    assert OLDEST[1] in first_hit(found) and OLDEST[0] in first_hit(found)
    assert OTTOS[0] not in found and "Otto" not in found and "hotel" not in found


def test_what_mira_wrote_finds_the_conversation_when_claudes_words_miss(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    said = "Which venue did we pick for the offsite in Lisbon?"
    [missed] = recall(orion, slack, claude, "retreat location")
    assert "No earlier conversation" in missed
    [found] = recall(orion, slack, claude, "retreat location", said=said)
    assert OLDEST[1] in first_hit(found) and OLDEST[0] in first_hit(found)
    assert OTTOS[0] not in found and "Otto" not in found and "hotel" not in found


def test_conversations_in_russian_and_japanese_are_found_by_questions_in_those_languages(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    russian, japanese = recall(
        orion, slack, claude, "Что мы решили по бюджету на маркетинг?", "予算会議で何を決めた？"
    )
    assert RUSSIAN[1] in first_hit(russian) and RUSSIAN[0] in first_hit(russian)
    assert JAPANESE[1] in first_hit(japanese) and JAPANESE[0] in first_hit(japanese)


def test_a_forgotten_conversation_is_no_longer_found(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    [before] = recall(orion, slack, claude, "offsite venue Lisbon")
    assert OLDEST[0] in before

    thread_ts, _ = open_thread(orion, slack, USER, DM)
    claude.reply_tool_use("forget", {"kind": "conversation", "id": OLDEST[0]})
    claude.reply("Forgotten.")
    conversation.post_user_message(orion, slack, USER, DM, thread_ts, "Forget the offsite one.")
    conversation.wait_for_messages(slack, DM, thread_ts, 1, after_greeting=True, timeout=30)
    assert OLDEST[0] not in (bucket.read(person(USER).search_key) or "")

    [after] = recall(orion, slack, claude, "offsite venue Lisbon")
    assert OLDEST[0] not in after and OLDEST[1] not in after
    assert OTTOS[0] not in after
