"""A turn's history: from Orion's own transcript — in a DM, all of it; in a channel thread,
with what members wrote since, read from Slack — a mention's bounded read of a long
thread, and what a read of a channel thread under Slack's non-Marketplace limits (15
messages a call, one call a minute) still gives.

Long threads end to end (the cut note) are in tests/e2e/test_long_threads.py, channel
threads in tests/e2e/test_channels.py; these read threads straight from the fake Slack
with the real Web API client.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from app.agent.history import ThreadMessage
from app.learning.conversation_record import (
    MAX_MESSAGES,
    ConversationOwner,
    ConversationRecord,
    said,
)
from app.slack.conversation.thread_history import (
    MAX_FORWARD_PAGES,
    MAX_TAIL_READS,
    REPLIES_PAGE_SIZE,
    WINDOW_MESSAGES,
    history_from_transcript,
    read_thread_ends,
)
from app.slack.web_client import configure_web_client
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_model import BOT_ID, Message

USER, CHANNEL = "U0NOOR", "C0MOVING"
OPENING = "Help me plan the office move: 60 people, two floors, one weekend."


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def client(slack: FakeSlack) -> AsyncWebClient:
    return configure_web_client(AsyncWebClient(token="xoxb-test-bot-token"), base_url=slack.url)


def orion_says(slack: FakeSlack, thread_ts: str, text: str) -> str:
    ts = slack.new_ts()
    slack.workspace.add(
        Message(ts=ts, channel=CHANNEL, thread_ts=thread_ts, text=text, bot_id=BOT_ID)
    )
    return ts


def member_says(slack: FakeSlack, thread_ts: str | None, text: str) -> str:
    return slack.add_user_message(CHANNEL, thread_ts, USER, text)


def channel_thread(slack: FakeSlack, replies: int) -> str:
    """A member's mention opens the thread, then `replies` messages, Orion and the member
    in turn."""
    thread_ts = member_says(slack, None, f"<@UBOT> {OPENING}")
    for n in range(1, replies + 1):
        if n % 2:
            orion_says(slack, thread_ts, f"Noted, step {n}.")
        else:
            member_says(slack, thread_ts, f"Step {n}: pack floor {n}.")
    return thread_ts


def replies_calls(slack: FakeSlack) -> list[dict[str, object]]:
    return [call.args for call in slack.calls_to("conversations.replies")]


# --- a channel thread, read from Slack -----------------------------------------------------------


async def test_a_thread_read_since_the_transcripts_newest_message_gives_only_what_came_after(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    thread_ts = channel_thread(slack, replies=4)
    newest_kept = [m.ts for m in slack.thread(CHANNEL, thread_ts)][-1]
    later = member_says(slack, thread_ts, "And who books the lift?")

    thread = await read_thread_ends(
        client, channel=CHANNEL, thread_ts=thread_ts, newest=later, oldest=newest_kept
    )

    # Slack gives the thread's parent whatever the window; the rest is what came since.
    after = [m["ts"] for m in thread.messages if m["ts"] != thread_ts]
    assert later in after and all(float(ts) >= float(newest_kept) for ts in after)
    assert thread.complete


async def test_a_read_slack_refuses_costs_the_history_and_nothing_else(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    thread_ts = channel_thread(slack, replies=2)
    mention = member_says(slack, thread_ts, "Where are we?")
    slack.inject_error("conversations.replies", error="internal_error", status=200)

    thread = await read_thread_ends(client, channel=CHANNEL, thread_ts=thread_ts, newest=mention)

    assert thread.messages == [] and not thread.complete


# --- Orion's own transcript ----------------------------------------------------------------------


def test_a_transcript_is_the_history_marked_where_it_left_messages_out() -> None:
    at = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
    kept = [
        said("user", OPENING, at=at, ts="1795000000.000001"),
        said("assistant", "Noted.", at=at),
        said("user", "Then floor 1?", at=at, ts="1795000000.000003"),
    ]

    whole = history_from_transcript(
        kept, dropped=0, current_ts="1795000000.000004", current_text="Now?"
    )
    cut = history_from_transcript(
        kept, dropped=12, current_ts="1795000000.000004", current_text="Now?"
    )
    # A retried delivery's message may already be there: it is not sent twice.
    again = history_from_transcript(
        kept, dropped=0, current_ts="1795000000.000003", current_text="Then floor 1?"
    )

    assert [(m.role, m.text) for m in whole] == [
        ("user", OPENING),
        ("assistant", "Noted."),
        ("user", "Then floor 1?"),
        ("user", "Now?"),
    ]
    assert not any(m.opens_cut for m in whole)
    assert cut[0].opens_cut and not any(m.opens_cut for m in cut[1:])
    assert [m.text for m in again] == [OPENING, "Noted.", "Then floor 1?"]


@pytest.mark.parametrize("past", [1, 40], ids=["just-past", "far-past"])
def test_a_long_conversation_keeps_the_persons_opening_request_once_with_a_cut(
    past: int,
) -> None:
    start = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
    count = MAX_MESSAGES + past
    messages = [
        said(
            "user" if n % 2 == 0 else "assistant",
            OPENING if n == 0 else f"Step {n}: pack floor {n}.",
            at=start + timedelta(seconds=n),
            ts=f"1795000000.{n + 1:06d}",
        )
        for n in range(count)
    ]
    record = ConversationRecord(
        "1795000000.000001", ConversationOwner(USER, "D0NOOR"), start
    ).with_messages(messages)

    history = history_from_transcript(
        record.messages, dropped=record.dropped, current_ts="1795000001.000001", current_text="Now?"
    )

    assert record.dropped == past
    assert history[0] == ThreadMessage("user", OPENING, opens_cut=True, sent_at=messages[0].sent_at)
    assert [m.text for m in history].count(OPENING) == 1
    assert f"Step {count - 1}: pack floor {count - 1}." in [m.text for m in history]
    assert "Step 1: pack floor 1." not in [m.text for m in history], "the middle is cut"
    assert history[-1].text == "Now?"


# --- a mention's bounded read (read_thread_ends) --------------------------------------------------


async def test_a_mention_reads_a_short_stretch_in_one_page(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    thread_ts = channel_thread(slack, 30)
    mention = member_says(slack, thread_ts, "What now?")

    thread = await read_thread_ends(client, channel=CHANNEL, thread_ts=thread_ts, newest=mention)

    assert thread.complete and len(thread.messages) == 32
    assert len(replies_calls(slack)) == 1


def spaced_conversation(slack: FakeSlack, replies: int, every_s: float, quiet_s: float) -> str:
    """A channel thread with `replies` messages `every_s` apart, the newest `quiet_s` ago
    (Slack's ts are when each was posted)."""
    began = time.time() - quiet_s - replies * every_s
    thread_ts = slack.add_user_message(CHANNEL, None, USER, OPENING, ts=f"{began:.6f}")
    for n in range(1, replies + 1):
        ts = f"{began + every_s * n:.6f}"
        if n % 2:
            slack.workspace.add(
                Message(ts=ts, channel=CHANNEL, thread_ts=thread_ts, text=f"Noted, step {n}.")
            )
        else:
            slack.add_user_message(CHANNEL, thread_ts, USER, f"Step {n}: pack floor {n}.", ts=ts)
    return thread_ts


@pytest.mark.parametrize(
    ("replies", "every_s", "quiet_s"),
    [(2_000, 30.0, 5.0), (20_000, 0.5, 60.0), (5_000, 60.0, 3 * 86_400.0)],
    ids=["2000-busy", "20000-burst", "5000-quiet-for-days"],
)
async def test_a_mention_in_a_long_thread_reads_its_opening_and_newest_messages_in_a_few_pages(
    slack: FakeSlack,
    client: AsyncWebClient,
    replies: int,
    every_s: float,
    quiet_s: float,
) -> None:
    thread_ts = spaced_conversation(slack, replies, every_s, quiet_s)
    mention = member_says(slack, thread_ts, "Where are we?")

    thread = await read_thread_ends(client, channel=CHANNEL, thread_ts=thread_ts, newest=mention)

    calls = replies_calls(slack)
    assert len(calls) <= MAX_FORWARD_PAGES + MAX_TAIL_READS
    assert all(int(str(call["limit"])) <= REPLIES_PAGE_SIZE for call in calls)
    texts = [m.get("text") for m in thread.messages]
    assert texts[0] == OPENING and "Where are we?" in texts, "the opening and the newest"
    newest = [
        f"Noted, step {n}." if n % 2 else f"Step {n}: pack floor {n}."
        for n in range(replies - WINDOW_MESSAGES + 1, replies + 1)
    ]
    assert [t for t in texts if t in newest] == newest, "every one of the newest, in order"
    assert len(texts) <= (MAX_FORWARD_PAGES + MAX_TAIL_READS) * REPLIES_PAGE_SIZE
    assert not thread.complete, "what lies between was not read, and says so"
    tss = [float(str(m["ts"])) for m in thread.messages]
    assert tss == sorted(tss) and len(set(tss)) == len(tss), "each message once, in order"


async def test_a_mention_under_non_marketplace_limits_goes_on_with_its_first_page(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    thread_ts = channel_thread(slack, 100)
    mention = member_says(slack, thread_ts, "Where are we?")
    slack.limit_history_reads()

    thread = await read_thread_ends(client, channel=CHANNEL, thread_ts=thread_ts, newest=mention)

    assert thread.messages[0].get("text") == f"<@UBOT> {OPENING}"
    assert len(thread.messages) == 15 and not thread.complete
    errors = [call.error for call in slack.calls_to("conversations.replies")]
    assert errors == [None, "ratelimited"], "one page, then one refusal, and no more"
