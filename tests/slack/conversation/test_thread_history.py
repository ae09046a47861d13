"""A turn's history: from Orion's transcript, or read back from Slack where Orion has none —
who said what, what is left out (Slack's own root, the message being answered twice),
where a long thread's opening request comes from in each Slack experience, and what a read
under Slack's non-Marketplace limits (15 messages a call, one call a minute) still gives.

Long threads end to end (paging, the cut note) are in tests/e2e/test_long_threads.py; these
read threads straight from the fake Slack with the real Web API client.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from app.agent.history import ThreadMessage
from app.learning.conversation_record import said
from app.slack.conversation.memory_note_blocks import NOTE_BLOCK_ID
from app.slack.conversation.thread_history import (
    MAX_FORWARD_PAGES,
    MAX_TAIL_READS,
    REPLIES_PAGE_SIZE,
    WINDOW_MESSAGES,
    SlackThread,
    history_from_slack,
    history_from_transcript,
    read_slack_thread,
    read_thread_ends,
    transcript_from_slack,
)
from app.slack.web_client import build_web_client
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_model import BOT_ID, Message

USER, CHANNEL = "U0NOOR", "D0NOOR"
GREETING = "Hi, I'm Orion. How can I help?"
OPENING = "Help me plan the office move: 60 people, two floors, one weekend."


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def client(slack: FakeSlack) -> AsyncWebClient:
    return build_web_client(token="xoxb-test-bot-token", base_url=slack.url)


def orion_says(slack: FakeSlack, thread_ts: str, text: str) -> str:
    ts = slack.new_ts()
    slack.workspace.add(
        Message(ts=ts, channel=CHANNEL, thread_ts=thread_ts, text=text, bot_id=BOT_ID)
    )
    return ts


def person_says(slack: FakeSlack, thread_ts: str | None, text: str) -> str:
    return slack.add_user_message(CHANNEL, thread_ts, USER, text)


def assistant_thread(slack: FakeSlack, replies: int) -> str:
    """assistant_view: Slack's root, Orion's greeting, the person's opening request, then
    `replies` more messages, Orion and the person in turn."""
    thread_ts = slack.open_assistant_thread(CHANNEL)
    orion_says(slack, thread_ts, GREETING)
    person_says(slack, thread_ts, OPENING)
    add_exchange(slack, thread_ts, replies)
    return thread_ts


def agent_conversation(slack: FakeSlack, replies: int) -> str:
    """agent_view: the person's own top-level message opens the conversation (its ts is the
    thread), then `replies` messages, Orion and the person in turn."""
    thread_ts = person_says(slack, None, OPENING)
    add_exchange(slack, thread_ts, replies)
    return thread_ts


def add_exchange(slack: FakeSlack, thread_ts: str, count: int) -> None:
    for n in range(1, count + 1):
        if n % 2:
            orion_says(slack, thread_ts, f"Noted, step {n}.")
        else:
            person_says(slack, thread_ts, f"Step {n}: pack floor {n}.")


def replies_calls(slack: FakeSlack) -> list[dict[str, object]]:
    return [call.args for call in slack.calls_to("conversations.replies")]


async def read_turn(
    client: AsyncWebClient, slack: FakeSlack, thread_ts: str, text: str
) -> list[ThreadMessage]:
    """The person writes `text` in the thread, and Orion reads the thread to answer it."""
    ts = person_says(slack, thread_ts, text)
    thread = await read_slack_thread(client, channel=CHANNEL, thread_ts=thread_ts)
    return history_from_slack(thread, thread_ts=thread_ts, current_ts=ts, current_text=text)


# --- a short thread ------------------------------------------------------------------------------


@pytest.mark.parametrize("slack_has_it_yet", [True, False], ids=["in-slack", "not-yet-in-slack"])
async def test_a_short_assistant_thread_is_read_whole_as_the_person_and_orion_said_it(
    slack: FakeSlack, client: AsyncWebClient, slack_has_it_yet: bool
) -> None:
    thread_ts = assistant_thread(slack, replies=2)  # greeting, opening, Orion, the person
    question = "And who books the lift?"
    # Slack's read API may not show the message being answered yet: the event carries it.
    ts = person_says(slack, thread_ts, question) if slack_has_it_yet else slack.new_ts()

    thread = await read_slack_thread(client, channel=CHANNEL, thread_ts=thread_ts)
    history = history_from_slack(thread, thread_ts=thread_ts, current_ts=ts, current_text=question)

    assert history == [
        ThreadMessage("assistant", GREETING),
        ThreadMessage("user", OPENING),
        ThreadMessage("assistant", "Noted, step 1."),
        ThreadMessage("user", "Step 2: pack floor 2."),
        ThreadMessage("user", question),
    ]
    assert thread.complete and len(replies_calls(slack)) == 1
    # What Orion keeps of it: what the person said and Orion answered, without Slack's
    # root, the greeting, and the message being answered.
    kept = transcript_from_slack(thread, current_ts=ts)
    assert [(m.role, m.text) for m in kept] == [(m.role, m.text) for m in history[1:-1]]


async def test_the_message_being_answered_is_taken_as_the_event_has_it(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    thread_ts = assistant_thread(slack, replies=0)
    # Slack's copy differs from the event's (an edit the read API already shows, say):
    # Claude answers what the event said, once.
    ts = person_says(slack, thread_ts, "Which floor first? (edited)")

    thread = await read_slack_thread(client, channel=CHANNEL, thread_ts=thread_ts)
    history = history_from_slack(
        thread, thread_ts=thread_ts, current_ts=ts, current_text="Which floor first?"
    )

    assert [m.text for m in history] == [GREETING, OPENING, "Which floor first?"]


# --- a long thread: where the opening request comes from -----------------------------------------


@pytest.mark.parametrize("experience", ["agent_view", "assistant_view"])
async def test_a_long_thread_keeps_the_persons_opening_request_with_a_cut(
    slack: FakeSlack, client: AsyncWebClient, experience: str
) -> None:
    long = WINDOW_MESSAGES + 40
    opened = agent_conversation if experience == "agent_view" else assistant_thread
    thread_ts = opened(slack, long)

    history = await read_turn(client, slack, thread_ts, "First question?")

    assert history[0] == ThreadMessage("user", OPENING, opens_cut=True)
    assert not any(m.opens_cut for m in history[1:])
    assert f"Step {long}: pack floor {long}." in [m.text for m in history]
    assert "Step 2: pack floor 2." not in [m.text for m in history], "the middle is cut"
    assert GREETING not in [m.text for m in history]
    assert history[-1] == ThreadMessage("user", "First question?")


async def test_a_thread_just_past_the_window_sends_its_opening_request_once(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    # Greeting, opening and 58 more: with the new question, one reply past the window, so
    # the opening request is both the cut's opening and the window's oldest message.
    thread_ts = assistant_thread(slack, replies=WINDOW_MESSAGES - 2)

    history = await read_turn(client, slack, thread_ts, "Where were we?")

    assert history[0] == ThreadMessage("user", OPENING, opens_cut=True)
    assert [m.text for m in history].count(OPENING) == 1
    assert GREETING not in [m.text for m in history]
    assert history[-1] == ThreadMessage("user", "Where were we?")


# --- Slack's limits ----------------------------------------------------------------------------


async def test_under_non_marketplace_limits_a_read_keeps_what_slack_gave_and_waits_for_nothing(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    # Orion's own client retries a 429 after Retry-After (a minute here): not for this read.
    thread_ts = assistant_thread(slack, replies=40)
    slack.limit_history_reads()

    first = await read_turn(client, slack, thread_ts, "First question?")
    second = await read_turn(client, slack, thread_ts, "Second question?")

    # One page of 15, then Slack's `ratelimited`: the history is what it gave, the opening
    # request included, and the question.
    assert [m.text for m in first][:2] == [GREETING, OPENING]
    assert len(first) == 15 - 1 + 1, "Slack's root is not the conversation's"
    assert first[-1] == ThreadMessage("user", "First question?")
    # Within the same minute: nothing from Slack at all, the question alone.
    assert second == [ThreadMessage("user", "Second question?")]
    errors = [call.error for call in slack.calls_to("conversations.replies")]
    assert errors == [None, "ratelimited", "ratelimited"], "never retried after Retry-After"


async def test_a_read_slack_refuses_costs_the_history_and_nothing_else(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    thread_ts = assistant_thread(slack, replies=2)
    slack.inject_error("conversations.replies", error="internal_error", status=200)

    thread = await read_slack_thread(client, channel=CHANNEL, thread_ts=thread_ts)

    assert thread.messages == [] and not thread.complete
    history = history_from_slack(thread, thread_ts=thread_ts, current_ts="9.9", current_text="Hi?")
    assert history == [ThreadMessage("user", "Hi?")]


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


def test_a_transcript_made_from_slack_keeps_neither_the_greeting_nor_the_memory_notes() -> None:
    note = {"type": "section", "block_id": NOTE_BLOCK_ID, "text": {"type": "mrkdwn", "text": "x"}}
    thread = SlackThread(
        [
            {"ts": "1.000001", "subtype": "assistant_app_thread", "text": "New Assistant Thread"},
            {"ts": "1.000002", "bot_id": BOT_ID, "text": "Welcome back, Sam!"},
            {"ts": "1.000003", "user": USER, "text": OPENING},
            {"ts": "1.000004", "bot_id": BOT_ID, "text": "Noted."},
            {"ts": "1.000005", "bot_id": BOT_ID, "text": "Saved: name = Sam", "blocks": [note]},
            {"ts": "1.000006", "user": USER, "text": "Which floor first?"},
        ],
        complete=True,
    )

    kept = transcript_from_slack(thread, current_ts="1.000006")

    assert [(m.role, m.text, m.ts) for m in kept] == [
        ("user", OPENING, "1.000003"),
        ("assistant", "Noted.", "1.000004"),
    ]


# --- a mention's bounded read (read_thread_ends) --------------------------------------------------


async def test_a_mention_reads_a_short_stretch_in_one_page(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    thread_ts = agent_conversation(slack, 30)
    mention = person_says(slack, thread_ts, "What now?")

    thread = await read_thread_ends(client, channel=CHANNEL, thread_ts=thread_ts, newest=mention)

    assert thread.complete and len(thread.messages) == 32
    assert len(replies_calls(slack)) == 1


def spaced_conversation(slack: FakeSlack, replies: int, every_s: float, quiet_s: float) -> str:
    """agent_view's conversation with `replies` messages `every_s` apart, the newest
    `quiet_s` ago (Slack's ts are when each was posted)."""
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
    mention = person_says(slack, thread_ts, "Where are we?")

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
    thread_ts = agent_conversation(slack, 100)
    mention = person_says(slack, thread_ts, "Where are we?")
    slack.limit_history_reads()

    thread = await read_thread_ends(client, channel=CHANNEL, thread_ts=thread_ts, newest=mention)

    assert thread.messages[0].get("text") == OPENING
    assert len(thread.messages) == 15 and not thread.complete
    errors = [call.error for call in slack.calls_to("conversations.replies")]
    assert errors == [None, "ratelimited"], "one page, then one refusal, and no more"
