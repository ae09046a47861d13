"""Each conversation's record: whose it is (decided once, never rewritten), and its
transcript (in order, bounded, redacted, readable whatever it holds)."""

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
    open_conversation,
    read_conversation,
)
from app.learning.session_index import SessionEntry, record_session
from app.memory.scopes import (
    conversation_marker_key,
    conversation_record_key,
    session_context_key,
)
from app.observability.redaction import redact_secret_shapes
from app.storage.store import ObjectStore
from tests.backends import OTHER_THREAD, OTHER_USER, THREAD, USER, Backend

DM, OTHER_DM = "D0123ABCD", "D0999ZZZZ"
NOW = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
MIRA = ConversationOwner(USER, DM, team="T0123ABCD")
OTTO = ConversationOwner(OTHER_USER, OTHER_DM, team="T0123ABCD")
SLACK_TOKEN = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"


async def _say(store: ObjectStore, owner: ConversationOwner, thread: str, *texts: str) -> None:
    transcript = TurnTranscript(store, owner, thread, await open_conversation(store, owner, thread))
    for n, text in enumerate(texts):
        transcript.add(said("user" if n % 2 == 0 else "assistant", text, at=NOW))
    await transcript.written()


async def test_the_first_to_see_a_conversation_owns_it_and_nobody_rewrites_that(
    store: ObjectStore, backend: Backend
) -> None:
    assert await begin_conversation(store, MIRA, THREAD, started=NOW)
    assert await begin_conversation(store, MIRA, THREAD, started=NOW), "the same owner agrees"
    before = backend.raw_read(conversation_record_key(THREAD))

    # Otto names Mira's thread (from his DM, or even from hers): it is not his.
    for intruder in (OTTO, ConversationOwner(OTHER_USER, DM), ConversationOwner(USER, OTHER_DM)):
        assert not await begin_conversation(store, intruder, THREAD, started=NOW)
        assert (await open_conversation(store, intruder, THREAD)).standing is Standing.NOT_YOURS
        opened = await open_conversation(store, intruder, THREAD)
        with pytest.raises(NotYourConversation):
            TurnTranscript(store, intruder, THREAD, opened)
    assert backend.raw_read(conversation_record_key(THREAD)) == before
    assert backend.raw_read(conversation_marker_key(OTHER_USER, THREAD)) is None
    assert (await open_conversation(store, MIRA, THREAD)).standing is Standing.OWN


async def test_two_instances_opening_one_conversation_at_once_agree_on_its_owner(
    store: ObjectStore,
) -> None:
    # Mira's event and a forged one naming her new thread race: one record, one owner.
    outcomes = await asyncio.gather(
        begin_conversation(store, MIRA, THREAD, started=NOW),
        begin_conversation(store, OTTO, THREAD, started=NOW),
    )
    record = await read_conversation(store, THREAD)
    assert record is not None
    assert sorted(outcomes) == [False, True]
    assert outcomes[record.owner.user == OTHER_USER] is True


async def test_a_thread_without_a_record_is_given_only_on_orions_own_word(
    store: ObjectStore,
) -> None:
    # Nothing kept for it: a message that opens it starts it; a reply is answered with
    # Slack's history (an old conversation, or one whose first write was lost).
    assert (await open_conversation(store, MIRA, THREAD, starts=True)).standing is Standing.NEW
    assert (await open_conversation(store, MIRA, THREAD)).standing is Standing.UNRECORDED
    # Otto's conversation from before records were kept: his index lists it, Mira's does not.
    await store.write(session_context_key(OTHER_THREAD), "# Roadmap\n\nOtto's plans.\n")
    await record_session(store, OTHER_USER, SessionEntry(OTHER_THREAD, "Roadmap", NOW, OTHER_DM))
    for starts in (False, True):
        mira = await open_conversation(store, MIRA, OTHER_THREAD, starts=starts)
        otto = await open_conversation(store, OTTO, OTHER_THREAD, starts=starts)
        assert (mira.standing, otto.standing) == (Standing.NOT_YOURS, Standing.UNRECORDED)


async def test_an_unreadable_record_gives_the_thread_to_nobody(store: ObjectStore) -> None:
    await store.write(conversation_record_key(THREAD), "[" * 50_000 + "]" * 50_000)
    assert (await open_conversation(store, MIRA, THREAD)).standing is Standing.NOT_YOURS
    assert not await begin_conversation(store, MIRA, THREAD, started=NOW)


async def test_a_turn_adds_to_the_transcript_in_order_and_never_to_someone_elses(
    store: ObjectStore, backend: Backend
) -> None:
    opened = await open_conversation(store, MIRA, THREAD, starts=True)
    transcript = TurnTranscript(store, MIRA, THREAD, opened)
    # Otto's forged event got there first, between Mira's read and her write.
    assert await begin_conversation(store, OTTO, THREAD, started=NOW)
    transcript.add(said("user", "Plan my week.", at=NOW, ts="1712345679.000001"))
    transcript.add(said("assistant", "Monday: budget.", at=NOW))
    await transcript.written()
    record = await read_conversation(store, THREAD)
    assert record is not None and record.owner == OTTO and record.messages == ()
    assert "Plan my week" not in (backend.raw_read(conversation_record_key(THREAD)) or "")

    await _say(store, MIRA, OTHER_THREAD, "Plan my week.", "Monday: budget.", "And Tuesday?")
    await _say(store, MIRA, OTHER_THREAD, "Tuesday: offsite.")
    record = await read_conversation(store, OTHER_THREAD)
    assert record is not None
    assert [(m.role, m.text) for m in record.messages] == [
        ("user", "Plan my week."),
        ("assistant", "Monday: budget."),
        ("user", "And Tuesday?"),
        ("user", "Tuesday: offsite."),
    ]


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
    raw = backend.raw_read(conversation_record_key(THREAD)) or ""
    assert SLACK_TOKEN not in raw and "[redacted]" in raw
    assert json.loads(raw)["messages"][0]["text"] == "Here is the bot token [redacted] for staging."
