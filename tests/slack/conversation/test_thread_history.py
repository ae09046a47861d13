"""How a Slack thread is read back as the conversation Claude is sent: who said what, what
is left out (Slack's own root, the message being answered twice), where a long thread's
opening request comes from in each Slack experience, and which thread's window a later turn
starts from.

Long threads end to end (paging, the cut note, edits) are in tests/e2e/test_long_threads.py;
these read threads straight from the fake Slack with the real Web API client.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from app.agent.history import ThreadMessage
from app.slack.conversation.thread_history import WINDOW_MESSAGES, ThreadReader
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
    reader: ThreadReader, client: AsyncWebClient, slack: FakeSlack, thread_ts: str, text: str
) -> list[ThreadMessage]:
    """The person writes `text` in the thread, and Orion reads the thread to answer it."""
    ts = person_says(slack, thread_ts, text)
    return await reader.read(
        client, channel=CHANNEL, thread_ts=thread_ts, current_ts=ts, current_text=text
    )


# --- a short thread ------------------------------------------------------------------------------


@pytest.mark.parametrize("slack_has_it_yet", [True, False], ids=["in-slack", "not-yet-in-slack"])
async def test_a_short_assistant_thread_is_read_whole_as_the_person_and_orion_said_it(
    slack: FakeSlack, client: AsyncWebClient, slack_has_it_yet: bool
) -> None:
    thread_ts = assistant_thread(slack, replies=2)  # greeting, opening, Orion, the person
    question = "And who books the lift?"
    # Slack's read API may not show the message being answered yet: the event carries it.
    ts = person_says(slack, thread_ts, question) if slack_has_it_yet else slack.new_ts()

    history = await ThreadReader().read(
        client, channel=CHANNEL, thread_ts=thread_ts, current_ts=ts, current_text=question
    )

    assert history == [
        ThreadMessage("assistant", GREETING),
        ThreadMessage("user", OPENING),
        ThreadMessage("assistant", "Noted, step 1."),
        ThreadMessage("user", "Step 2: pack floor 2."),
        ThreadMessage("user", question),
    ]
    assert len(replies_calls(slack)) == 1


async def test_the_message_being_answered_is_taken_as_the_event_has_it(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    thread_ts = assistant_thread(slack, replies=0)
    # Slack's copy differs from the event's (an edit the read API already shows, say):
    # Claude answers what the event said, once.
    ts = person_says(slack, thread_ts, "Which floor first? (edited)")

    history = await ThreadReader().read(
        client,
        channel=CHANNEL,
        thread_ts=thread_ts,
        current_ts=ts,
        current_text="Which floor first?",
    )

    assert [m.text for m in history] == [GREETING, OPENING, "Which floor first?"]


async def test_a_short_agent_conversation_keeps_the_persons_first_message_in_every_turn(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    thread_ts = agent_conversation(slack, replies=1)
    reader = ThreadReader()
    await read_turn(reader, client, slack, thread_ts, "Start with floor 2?")
    orion_says(slack, thread_ts, "Yes, floor 2 first.")

    history = await read_turn(reader, client, slack, thread_ts, "Then floor 1?")

    assert [m.text for m in history] == [
        OPENING,
        "Noted, step 1.",
        "Start with floor 2?",
        "Yes, floor 2 first.",
        "Then floor 1?",
    ]
    assert not any(m.opens_cut for m in history), "nothing was left out"


# --- a long thread: where the opening request comes from -----------------------------------------


@pytest.mark.parametrize(
    ("experience", "calls_on_later_turns"),
    [
        # The person's own root message opens the conversation: the window read has it.
        ("agent_view", 1),
        # Slack's root and Orion's greeting come first: the thread's head is read too.
        ("assistant_view", 2),
    ],
)
async def test_a_long_threads_later_turn_keeps_the_persons_opening_request_with_a_cut(
    slack: FakeSlack, client: AsyncWebClient, experience: str, calls_on_later_turns: int
) -> None:
    long = WINDOW_MESSAGES + 40
    opened = agent_conversation if experience == "agent_view" else assistant_thread
    thread_ts = opened(slack, long)
    reader = ThreadReader()
    first = await read_turn(reader, client, slack, thread_ts, "First question?")
    orion_says(slack, thread_ts, "First answer.")
    before = len(replies_calls(slack))

    later = await read_turn(reader, client, slack, thread_ts, "Second question?")

    for history in (first, later):
        assert history[0] == ThreadMessage("user", OPENING, opens_cut=True)
        assert not any(m.opens_cut for m in history[1:])
        assert f"Step {long}: pack floor {long}." in [m.text for m in history]
        assert "Step 2: pack floor 2." not in [m.text for m in history], "the middle is cut"
        assert GREETING not in [m.text for m in history]
    assert [m.text for m in later[-3:]] == ["First question?", "First answer.", "Second question?"]
    calls = replies_calls(slack)[before:]
    assert len(calls) == calls_on_later_turns
    assert calls[0].get("oldest"), "the later turn reads from its window, not the whole thread"


async def test_each_thread_is_read_from_its_own_window(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    reader = ThreadReader()
    long_thread = assistant_thread(slack, WINDOW_MESSAGES + 40)
    await read_turn(reader, client, slack, long_thread, "About the long one?")
    short_thread = assistant_thread(slack, replies=2)
    before = len(replies_calls(slack))

    history = await read_turn(reader, client, slack, short_thread, "And this one?")

    [call] = replies_calls(slack)[before:]
    assert call["ts"] == short_thread and not call.get("oldest"), "read from its start"
    assert [m.text for m in history][:2] == [GREETING, OPENING]
    assert not any(m.opens_cut for m in history)


async def test_a_thread_just_past_the_window_sends_its_opening_request_once(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    # Greeting, opening and 58 more: with the new question, one reply past the window, so
    # the opening request is both the cut's opening and the window's oldest message.
    thread_ts = assistant_thread(slack, replies=WINDOW_MESSAGES - 2)

    history = await read_turn(ThreadReader(), client, slack, thread_ts, "Where were we?")

    assert history[0] == ThreadMessage("user", OPENING, opens_cut=True)
    assert [m.text for m in history].count(OPENING) == 1
    assert GREETING not in [m.text for m in history]
    assert history[-1] == ThreadMessage("user", "Where were we?")


async def test_deletions_in_a_long_threads_window_do_not_make_it_read_as_a_short_one(
    slack: FakeSlack, client: AsyncWebClient
) -> None:
    thread_ts = assistant_thread(slack, WINDOW_MESSAGES + 40)
    reader = ThreadReader()
    await read_turn(reader, client, slack, thread_ts, "First question?")
    # The person deletes a few of their newest messages: the window now holds fewer
    # messages than it can, though the thread's middle is still left out.
    with slack.workspace.lock:
        newest = [m for m in slack.thread(CHANNEL, thread_ts) if not m.is_bot][-4:-1]
        for message in newest:
            deleted = slack.workspace.get(CHANNEL, message.ts)
            assert deleted is not None
            deleted.deleted = True

    history = await read_turn(reader, client, slack, thread_ts, "Second question?")

    assert history[0] == ThreadMessage("user", OPENING, opens_cut=True)
    assert GREETING not in [m.text for m in history]
    assert not {m.text for m in newest} & {m.text for m in history}
