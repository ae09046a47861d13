"""Each conversation's record: in its owner's home, whose it is (decided once, never
rewritten), and its transcript (in order, bounded, redacted, readable whatever it holds)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

import pytest

from app.learning.conversation_record import (
    MAX_MESSAGE_CHARS,
    MAX_MESSAGES,
    MAX_TRANSCRIPT_CHARS,
    WITHHELD,
    ConversationOwner,
    ConversationRecord,
    said,
    storable,
)
from app.learning.conversations import (
    NotYourConversation,
    Standing,
    TurnTranscript,
    begin_conversation,
    read_conversation,
)
from app.memory.homes import person
from app.observability.redaction import redact_secret_shapes
from app.storage.store import ObjectStore
from tests.backends import OTHER_THREAD, OTHER_USER, THREAD, USER, Backend
from tests.layout import open_conversation

DM, OTHER_DM = "D0123ABCD", "D0999ZZZZ"
NOW = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
MIRA = ConversationOwner(USER, DM, team="T0123ABCD")
OTTO = ConversationOwner(OTHER_USER, OTHER_DM, team="T0123ABCD")
SLACK_TOKEN = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
MIRAS = person(USER).conversation_key(THREAD)


async def _say(store: ObjectStore, owner: ConversationOwner, thread: str, *texts: str) -> None:
    transcript = TurnTranscript(store, owner, thread, await open_conversation(store, owner, thread))
    for n, text in enumerate(texts):
        transcript.add(said("user" if n % 2 == 0 else "assistant", text, at=NOW))
    await transcript.write()


async def test_the_first_to_see_a_conversation_owns_it_and_nobody_rewrites_that(
    store: ObjectStore, backend: Backend
) -> None:
    assert await begin_conversation(store, MIRA, THREAD, started=NOW)
    assert not await begin_conversation(store, MIRA, THREAD, started=NOW), "a retry: kept"
    before = backend.raw_read(MIRAS)

    # Her thread named from another DM of hers: her home holds it, and it is not that DM's.
    elsewhere = ConversationOwner(USER, OTHER_DM)
    assert not await begin_conversation(store, elsewhere, THREAD, started=NOW)
    opened = await open_conversation(store, elsewhere, THREAD)
    assert opened.standing is Standing.NOT_YOURS
    with pytest.raises(NotYourConversation):
        TurnTranscript(store, elsewhere, THREAD, opened)
    assert backend.raw_read(MIRAS) == before
    assert (await open_conversation(store, MIRA, THREAD)).standing is Standing.OWN


async def test_someone_else_naming_a_thread_finds_nothing_of_its_owners(
    store: ObjectStore, backend: Backend
) -> None:
    await _say(store, MIRA, THREAD, "Plan my week.", "Monday: budget.")
    before = backend.raw_read(MIRAS)

    # Otto names Mira's thread, from his DM or even from hers: his home has no such
    # conversation, so his event starts one of its own there.
    for intruder in (OTTO, ConversationOwner(OTHER_USER, DM)):
        opened = await open_conversation(store, intruder, THREAD)
        assert opened.standing is Standing.NEW and opened.transcript == ()
    assert await begin_conversation(store, OTTO, THREAD, started=NOW)
    await _say(store, OTTO, THREAD, "What did Mira plan?")

    assert backend.raw_read(MIRAS) == before
    otto = await read_conversation(store, person(OTHER_USER), THREAD)
    assert otto is not None and [m.text for m in otto.messages] == ["What did Mira plan?"]
    assert otto.owner == OTTO


async def test_two_deliveries_opening_one_conversation_at_once_agree_on_its_owner(
    store: ObjectStore,
) -> None:
    # A thread start and its retry, and an event naming the thread from another DM of
    # hers, race: one record, one owner.
    elsewhere = ConversationOwner(USER, OTHER_DM)
    outcomes = await asyncio.gather(
        begin_conversation(store, MIRA, THREAD, started=NOW),
        begin_conversation(store, MIRA, THREAD, started=NOW),
        begin_conversation(store, elsewhere, THREAD, started=NOW),
    )
    record = await read_conversation(store, person(USER), THREAD)
    assert record is not None
    assert sum(outcome is not None for outcome in outcomes) == 1
    winner = next(n for n, outcome in enumerate(outcomes) if outcome is not None)
    assert record.owner == (elsewhere if winner == 2 else MIRA)


async def test_an_unreadable_record_starts_the_conversation_afresh(store: ObjectStore) -> None:
    # In the person's own home, an object that cannot be read (nested past the parser's
    # limit) is answered as a new conversation, and its first write replaces it.
    await store.write(MIRAS, "[" * 50_000 + "]" * 50_000)
    opened = await open_conversation(store, MIRA, THREAD)
    assert opened.standing is Standing.NEW
    transcript = TurnTranscript(store, MIRA, THREAD, opened)
    transcript.add(said("user", "Plan my week.", at=NOW, ts="1712345679.000001"))
    await transcript.write()
    record = await read_conversation(store, person(USER), THREAD)
    assert record is not None and record.owner == MIRA
    assert [m.text for m in record.messages] == ["Plan my week."]


async def test_a_turn_adds_to_the_transcript_in_order_and_never_to_someone_elses(
    store: ObjectStore, backend: Backend
) -> None:
    opened = await open_conversation(store, MIRA, THREAD)
    assert opened.standing is Standing.NEW
    transcript = TurnTranscript(store, MIRA, THREAD, opened)
    # An event from another DM got there first, between Mira's read and her write.
    elsewhere = ConversationOwner(USER, OTHER_DM)
    assert await begin_conversation(store, elsewhere, THREAD, started=NOW)
    transcript.add(said("user", "Plan my week.", at=NOW, ts="1712345679.000001"))
    transcript.add(said("assistant", "Monday: budget.", at=NOW))
    await transcript.write()
    record = await read_conversation(store, person(USER), THREAD)
    assert record is not None and record.owner == elsewhere and record.messages == ()
    assert "Plan my week" not in (backend.raw_read(MIRAS) or "")

    await _say(store, MIRA, OTHER_THREAD, "Plan my week.", "Monday: budget.", "And Tuesday?")
    await _say(store, MIRA, OTHER_THREAD, "Tuesday: offsite.")
    record = await read_conversation(store, person(USER), OTHER_THREAD)
    assert record is not None
    assert [(m.role, m.text) for m in record.messages] == [
        ("user", "Plan my week."),
        ("assistant", "Monday: budget."),
        ("user", "And Tuesday?"),
        ("user", "Tuesday: offsite."),
    ]


async def test_a_turn_writes_its_question_and_answer_once_with_the_freshest_summary(
    store: ObjectStore, backend: Backend
) -> None:
    from app.learning.summary_file import Summary

    assert await begin_conversation(store, MIRA, THREAD, started=NOW, context={"channel_id": "C1"})
    transcript = TurnTranscript(store, MIRA, THREAD, await open_conversation(store, MIRA, THREAD))
    transcript.add(said("user", "Plan my week.", at=NOW, ts="1712345679.000001"))
    transcript.add(said("assistant", "Monday: budget.", at=NOW))
    first = transcript.write(Summary("Weekly plan", "Mira plans her week.", NOW))
    again = transcript.write()
    assert first is again, "one write, shared"
    await first
    transcript.add(said("user", "Too late to be written.", at=NOW))

    record = await read_conversation(store, person(USER), THREAD)
    assert record is not None and record.context == {"channel_id": "C1"}
    assert [m.text for m in record.messages] == ["Plan my week.", "Monday: budget."]
    assert record.summary is not None and record.summary.body == "Mira plans her week."
    assert transcript.messages() == record.messages


async def test_a_question_claude_refused_is_never_written(store: ObjectStore) -> None:
    transcript = TurnTranscript(store, MIRA, THREAD, await open_conversation(store, MIRA, THREAD))
    transcript.add(said("user", "Something Claude refuses.", at=NOW, ts="1712345679.000001"))
    transcript.take_back("1712345679.000001")
    transcript.add(said("user", "A fine question.", at=NOW, ts="1712345679.000002"))
    await transcript.write()
    record = await read_conversation(store, person(USER), THREAD)
    assert record is not None and [m.text for m in record.messages] == ["A fine question."]


async def test_a_transcript_keeps_the_opening_and_the_newest_within_its_bounds() -> None:
    record = ConversationRecord(THREAD, MIRA, NOW)
    huge = "x" * 40_000
    record = record.with_messages([said("user", huge, at=NOW)])
    assert len(record.messages[0].text) == MAX_MESSAGE_CHARS and record.messages[0].cut
    for n in range(MAX_MESSAGES * 2):
        text = f"message {n} " + "y" * 1_000
        record = record.with_messages([said("assistant", text, at=NOW, ts=f"1712345{n:03d}.1")])
    assert len(record.messages) <= MAX_MESSAGES
    assert sum(len(m.text) for m in record.messages) <= MAX_TRANSCRIPT_CHARS
    assert record.messages[0].text == huge[:MAX_MESSAGE_CHARS], "the opening stays"
    assert record.messages[-1].text.startswith(f"message {MAX_MESSAGES * 2 - 1} ")
    assert record.dropped == MAX_MESSAGES * 2 - (len(record.messages) - 1)
    # A message kept already (by its Slack ts) is not added twice.
    assert record.with_messages([record.messages[-1]]) == record
    assert ConversationRecord.parse(record.render()) == record


def test_a_cut_transcript_keeps_the_persons_opening_not_orions_greeting() -> None:
    greeting = said("assistant", "Hi, I'm Orion. How can I help?", at=NOW)
    opening = said("user", "Help me plan the migration.", at=NOW)
    steps = [said("user", f"Step {n}.", at=NOW, ts=f"1712345{n:03d}.1") for n in range(300)]
    record = ConversationRecord(THREAD, MIRA, NOW).with_messages([greeting, opening, *steps])
    assert record.messages[0] == opening
    assert record.messages[-1].text == "Step 299."
    assert record.dropped == 302 - len(record.messages)
    short = ConversationRecord(THREAD, MIRA, NOW).with_messages([greeting, opening])
    assert short.messages == (greeting, opening) and short.dropped == 0, "within bounds: all"


# Shapes that JSON writes differently from the text (a line break, a quote, a backslash
# becomes two characters), next to a secret's label.
AWKWARD = [
    f"my token is {SLACK_TOKEN}",
    "password:\nhunter2",
    'password: "hunter2"',
    'pwd=abc"def',
    "pwd=abc\\def",
    'api_key:\\"x9y8z7w6\\"',
    "secret: correct-horse\\nbattery",
    '{"password": "hunter2", "token": "abc123def456"}',
    "-----BEGIN RSA PRIVATE KEY-----\\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM\\n"
    "-----END RSA PRIVATE KEY-----",
    "password\\",
    "the password reset flow",
]


@pytest.mark.parametrize("text", AWKWARD)
def test_what_the_transcript_keeps_the_stores_redaction_leaves_as_it_is(text: str) -> None:
    record = ConversationRecord(THREAD, MIRA, NOW).with_messages([said("user", text, at=NOW)])
    rendered = record.render()
    # The store redacts every write (app/memory/secret_free_store.py): nothing more to do.
    assert redact_secret_shapes(rendered) == rendered
    assert ConversationRecord.parse(rendered) == record
    kept = record.messages[0].text
    assert kept == storable(kept)
    # (Which shapes are secrets is app/observability/redaction.py's to say.)
    for secret in (SLACK_TOKEN, "hunter2", "MIIEpAIBAAKCAQEA"):
        assert secret not in rendered
    if text == "the password reset flow":
        assert kept == text, "prose stays as it is"


def test_a_message_the_store_would_keep_changing_is_withheld() -> None:
    # Whatever storable cannot settle is not kept at all (and the record stays JSON).
    assert storable(WITHHELD) == WITHHELD


async def test_a_transcript_through_the_kept_store_is_stored_redacted(backend: Backend) -> None:
    store = backend.kept()
    await _say(store, MIRA, THREAD, f"Here is the bot token {SLACK_TOKEN} for staging.")
    raw = backend.raw_read(MIRAS) or ""
    assert SLACK_TOKEN not in raw and "[redacted]" in raw
    assert json.loads(raw)["messages"][0]["text"] == "Here is the bot token [redacted] for staging."


def test_a_channel_conversation_whose_opener_was_forgotten_names_nobody_and_goes_on() -> None:
    room = "C0LAUNCH1"
    record = ConversationRecord(THREAD, ConversationOwner(USER, room, kind="channel"), NOW)
    record = record.with_messages(
        [said("user", "Kick-off?", at=NOW, user=USER), said("user", "Me.", at=NOW, user=OTHER_USER)]
    )

    without = record.without_author(USER)

    assert USER not in without.render()
    assert ConversationRecord.parse(without.render()) == without
    assert [m.text for m in without.messages] == ["Me."]
    member = ConversationOwner(OTHER_USER, room, kind="channel")
    assert member.may_continue(without.owner), "the channel's conversation goes on"
    with pytest.raises(ValueError):
        ConversationOwner("", DM)  # a person's conversation always names its person
