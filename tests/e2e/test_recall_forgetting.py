"""Forgetting reaches what recall indexed: every word a forgotten conversation held
leaves the person's search index and its transcript, in the bucket (issue 38, item 6).

Mira's conversation is kept as Orion keeps it — listed in her profile, its object with
its summary and transcript, and a search index over all of it —, and holds a detail said once in
passing ("our puppy Biscuit"). The Home tab's Forget on that conversation, then Forget
everything, are clicked as the person would; the bucket is read whole after each.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.learning.conversation_record import ConversationOwner, ConversationRecord, said
from app.learning.search_index import (
    SearchIndex,
    document_for,
    parse_search_index,
    render_search_index,
)
from app.learning.summary_file import Summary
from app.memory.homes import person
from app.slack.home.memory_view import ACTION_FORGET_CONVERSATION, ACTION_FORGET_EVERYTHING
from tests import layout
from tests.e2e.memory_bucket import Bucket
from tests.e2e.test_memory_controls import (
    DM,
    LEARNED,
    SUMMARY,
    THREAD,
    TITLE,
    UPDATED,
    USER,
    click,
    everything_in,
    mira,
    open_home,
    otto,
    seed,
)
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

SEARCH_KEY = person(USER).search_key
DETAIL = "Sorry, our puppy Biscuit chewed through the projector cable again."


def transcript() -> ConversationRecord:
    owner = ConversationOwner(USER, DM)
    return (
        ConversationRecord(THREAD, owner, LEARNED)
        .with_messages(
            [
                said("user", "Let's plan the billing page launch.", at=LEARNED, ts=THREAD),
                said("user", DETAIL, at=LEARNED, ts="1777000001.000300"),
                said("assistant", "Copy from Dana, ship on Friday.", at=UPDATED, ts=None),
            ]
        )
        .with_summary(Summary(TITLE, SUMMARY, UPDATED))
    )


@pytest.fixture
def kept(bucket: Bucket) -> Bucket:
    seed(bucket, mira())
    seed(bucket, otto())
    record = transcript()
    bucket.write(layout.conversation_key(USER, THREAD), record.render())
    index = SearchIndex(complete=True)
    index.add([document_for(THREAD, TITLE, SUMMARY, record.messages, UPDATED, LEARNED, DM)])
    bucket.write(SEARCH_KEY, render_search_index(index))
    assert parse_search_index(bucket.read(SEARCH_KEY)).postings("biscuit")
    return bucket


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], kept: Bucket) -> OrionServer:
    return orion_on_bucket()


def test_forgetting_a_conversation_takes_its_words_out_of_the_index_and_the_transcript(
    orion: OrionServer, slack: FakeSlack, kept: Bucket
) -> None:
    view = open_home(orion, slack, USER, DM)

    click(orion, slack, USER, view, ACTION_FORGET_CONVERSATION, THREAD)

    index = parse_search_index(kept.read(SEARCH_KEY))
    assert THREAD not in index.threads
    assert not index.postings("biscuit") and not index.postings("projector")
    left = everything_in(kept)
    assert [key for key, content in left.items() if "Biscuit" in content] == []


def test_forget_everything_leaves_no_index_and_no_transcript(
    orion: OrionServer, slack: FakeSlack, kept: Bucket
) -> None:
    view = open_home(orion, slack, USER, DM)

    click(orion, slack, USER, view, ACTION_FORGET_EVERYTHING)

    left = everything_in(kept)
    assert SEARCH_KEY not in left
    assert layout.conversation_key(USER, THREAD) not in left
    assert [
        key for key, content in left.items() if "Biscuit" in content or "biscuit" in content
    ] == []
