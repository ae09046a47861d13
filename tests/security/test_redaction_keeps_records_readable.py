"""Attacker's review of the store's redaction of secrets (app/memory/secret_free_store.py)
against the JSON records it redacts: a person's words that end in a credential's label
("…reset my password:") or quote a secret (`password: "hunter2"`) must neither break the
record they are stored in — the transcript, the profile (which holds the erasure marks),
the search index — nor leave the secret in the bucket. Runs on both backends."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from app.agent.history import ThreadMessage
from app.learning.conversation_record import ConversationOwner, ConversationRecord, said
from app.learning.guard import Guard
from app.learning.profile import Profile
from app.learning.search_index import parse_search_index
from app.learning.session_summary import learn_from_turn
from app.learning.summary_file import SummaryDraft
from app.memory.homes import person
from app.observability.redaction import redact_secret_shapes
from tests.backends import THREAD, USER, Backend
from tests.security.test_secret_shapes_table import ROWS

NOW = datetime.now(UTC).replace(microsecond=0)
HOME = person(USER)
DM = "D0123ABCD"
QUESTION = "I am locked out of the payroll portal since Monday. How do I reset my password:"
ANSWER = "Open Settings, then Security, and press Reset. Then pick a long one."
SHARED = 'Done. For the record the new one is password: "hunter2-Lisbon"'


async def _summarize(previous: object, material: object) -> SummaryDraft:
    return SummaryDraft("Reset my password:", "Locked out of payroll; reset it in Settings.")


async def _a_conversation_about_a_password(backend: Backend) -> None:
    """A turn as Orion ends it: the transcript written, then the summary, the search
    entry and the profile, all through the store as Orion keeps memories."""
    store = backend.kept()
    guard = await Guard.reading(store, HOME)
    record = ConversationRecord(THREAD, ConversationOwner(USER, DM), NOW).with_messages(
        [
            said("user", QUESTION, at=NOW),
            said("assistant", ANSWER, at=NOW),
            said("user", SHARED, at=NOW),
        ]
    )
    await guard.store.write(HOME.conversation_key(THREAD), record.render())
    await learn_from_turn(
        guard,
        thread_ts=THREAD,
        channel=DM,
        history=[ThreadMessage("user", QUESTION), ThreadMessage("assistant", ANSWER)],
        previous=None,
        summarize=_summarize,
        now=NOW,
    )


async def test_words_ending_in_a_credentials_label_leave_every_record_readable(
    backend: Backend,
) -> None:
    await _a_conversation_about_a_password(backend)

    stored = ConversationRecord.parse(backend.raw_read(HOME.conversation_key(THREAD)))
    assert stored is not None, "the transcript is readable"
    assert [m.text for m in stored.messages][:2] == [QUESTION, ANSWER]
    listed = Profile.parse(backend.raw_read(HOME.profile_key)).conversations
    assert [(e.thread_ts, e.title) for e in listed] == [(THREAD, "Reset my password:")]
    # Read as another instance would (nothing kept in its memory): the index is sound.
    assert parse_search_index(backend.raw_read(HOME.search_key)).threads == [THREAD]


async def test_a_quoted_secret_in_a_transcript_is_redacted_and_the_record_stays_json(
    backend: Backend,
) -> None:
    await _a_conversation_about_a_password(backend)

    raw = backend.raw_read(HOME.conversation_key(THREAD))
    assert raw is not None and "hunter2" not in raw
    stored = ConversationRecord.parse(raw)
    assert stored is not None
    # As the same words are redacted outside JSON: the quotes stay.
    assert stored.messages[-1].text.endswith('password: "[redacted]"')
    assert not any("hunter2" in (backend.raw_read(key) or "") for key in backend.raw_names())


@pytest.mark.parametrize(
    "text",
    [
        "Reset my password:",
        "Rotate the API key =",
        "Wi-Fi password: **",
        "Secret:",
        "密码：",
        "the office pwd: 'x",
        'password: "hunter2"',
        'password: ""',
        'pw: abc"def',
        "password: back\\slash",
    ],
)
def test_json_holding_a_label_or_a_quoted_value_stays_the_same_json_apart_from_secrets(
    text: str,
) -> None:
    for separators in ((", ", ": "), (",", ":")):
        document = json.dumps(
            {"title": text, "next": "Otto's plan", "list": [text, text]},
            ensure_ascii=False,
            separators=separators,
        )
        scrubbed = json.loads(redact_secret_shapes(document))
        assert scrubbed["next"] == "Otto's plan"
        assert scrubbed["title"] == scrubbed["list"][0] == scrubbed["list"][1]
        assert "hunter2" not in scrubbed["title"] and "abc" not in scrubbed["title"]


@pytest.mark.parametrize(("text", "secret"), [(t, s) for _, t, s in ROWS], ids=[r[0] for r in ROWS])
def test_every_kind_of_secret_inside_json_leaves_it_json_however_it_is_cut_or_quoted(
    text: str, secret: str
) -> None:
    """Each secret of the table, in a stored JSON object: cut across two of its strings at
    every place, or with a quote or a backslash at every place."""
    cut = [(text[:at], text[at:]) for at in range(1, len(text))]
    marked = [
        (text[:at] + mark + text[at:], "Otto's plan: 95k")
        for at in range(len(text) + 1)
        for mark in '"\\'
    ]
    said = f"Note: {text}"
    for first, second in [(said, "Otto's plan: 95k"), *cut, *marked]:
        document = json.dumps(
            {"a": first, "b": second, "c": "it's"}, ensure_ascii=False, separators=(",", ":")
        )
        scrubbed = json.loads(redact_secret_shapes(document))
        assert scrubbed["c"] == "it's"
        if first == said:
            assert secret not in scrubbed["a"], "and the whole secret is still redacted"
