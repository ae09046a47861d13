"""Attacks on what the person wrote, searched as one more part beside Claude's words, and on a
number written against the character it counts ("5日") as a term."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from app.learning.channel_recall import PUBLIC, ChannelRecallScope, ChannelRecallTool
from app.learning.conversation_record import ConversationOwner, ConversationRecord, said
from app.learning.passages import passages
from app.learning.search_index import document_for, record_search_document
from app.learning.search_terms import MAX_TERM_CHARS, query_terms, text_terms
from app.learning.summary_file import Summary
from app.memory.homes import channel, workspace_channels_key
from app.storage.store import ObjectStore

AT = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
ANA = "U0ANA0001"
HERE, ELSEWHERE = "C0HERE001", "C0ELSE001"


def test_a_number_and_what_it_counts_is_not_found_inside_a_longer_number() -> None:
    # The index holds "5日" for "は5日" and never for "15日" / "25日" (search_terms.py
    # `_NUMBER_OF`); passages must find it where the index does, or the dentist on the
    # 15th is what Claude reads for "what is on the 5th?".
    assert "5日" not in text_terms("15日は歯医者") and "5日" in text_terms("旅行は5日から")
    messages = [
        said("user", "15日は歯医者の予約があります。" + "持ち物は保険証です。" * 40, at=AT),
        said("assistant", "了解しました。" + "忘れずに。" * 40, at=AT),
        said("user", "25日は大阪出張です。" + "新幹線で行きます。" * 40, at=AT),
        said("assistant", "はい。" + "気をつけて。" * 40, at=AT),
        said("user", "旅行は5日から始まります。", at=AT),
    ]
    found = passages(messages, query_terms("5日"), room=300)
    assert [p.text for p in found if p.matched] == ["旅行は5日から始まります。"]
    # The same for an amount: 1000円 is not 21000円.
    amounts = [
        said("user", "家賃の補助は21000円です。" + "毎月振り込まれます。" * 40, at=AT),
        said("user", "会費は1000円でした。", at=AT),
    ]
    [shown] = [p.text for p in passages(amounts, query_terms("1000円"), room=300) if p.matched]
    assert shown == "会費は1000円でした。"


async def _thread(store: ObjectStore, channel_id: str, n: int, title: str, body: str) -> None:
    thread_ts = f"{1_777_000_000 + n}.{n:06d}"
    moment = AT + timedelta(hours=n)
    home = channel(channel_id)
    owner = ConversationOwner(ANA, channel_id, kind="channel")
    opening = said("user", body, at=moment, ts=thread_ts, user=ANA)
    record = ConversationRecord(thread_ts, owner, moment).with_messages([opening])
    await store.write(
        home.conversation_key(thread_ts), record.with_summary(Summary(title, body, moment)).render()
    )
    document = document_for(thread_ts, title, body, [opening], moment, moment, channel_id)
    await record_search_document(store, home, document)


async def test_the_mentions_words_do_not_crowd_claudes_match_out_of_a_public_channels_search(
    store: ObjectStore,
) -> None:
    # In a public channel a search reads several homes (this channel's and the other public
    # channels'), merged by score. Claude's words find the answer; the person's long message
    # matches chatter elsewhere on many words, whose summed score beats Claude's two-word
    # match: with the message as one more part, the answer must still come back.
    await _thread(store, HERE, 1, "Retreat", "The retreat location is the Pestana palace.")
    for n in range(20):
        await _thread(store, ELSEWHERE, 10 + n, f"Invoices {n}", f"Invoice number {n} is paid.")
    chatter = "Venue for the offsite in Lisbon? marketing newsletter partner webinar press kit"
    for n in range(3):
        await _thread(store, ELSEWHERE, 40 + n, f"Chatter {n}", chatter)
    listed = {PUBLIC: [[HERE, 1_777_000_000], [ELSEWHERE, 1_777_000_001]]}
    await store.write(workspace_channels_key(), json.dumps(listed))

    async def still_public(ids: object) -> set[str]:
        return {HERE, ELSEWHERE}

    def tool(message: str) -> ChannelRecallTool:
        scope = ChannelRecallScope(
            HERE, "1777999999.000001", public=True, still_public=still_public
        )
        return ChannelRecallTool(store, scope, actor=ANA, message=message)

    def titles(result: object) -> list[str]:
        assert isinstance(result, list), result
        return [b["title"].rsplit(" (", 1)[0] for b in result if b["type"] == "search_result"]

    asked = {"queries": ["retreat location"], "limit": 3}
    assert titles(await tool("").call(asked)) == ["Retreat"]
    said_ = (
        "Which venue did we pick for the offsite in Lisbon? Marketing needs it for the "
        "newsletter, the partner webinar and the press kit"
    )
    assert "Retreat" in titles(await tool(said_).call(asked))


def test_a_number_longer_than_a_term_is_found_as_the_index_cut_it() -> None:
    # A 37-digit number and the day it counts: the index keeps the term's last 32 characters,
    # and the passages find the message by them (the term alone, as the index matched it).
    number = "1234567890" * 3 + "1234567日"
    said_it = said("user", f"参照番号は{number}です。", at=AT)
    [cut] = [group for group in query_terms(number) if group[0][0].isdigit() and "日" in group[0]]
    assert cut == (number[-MAX_TERM_CHARS:],) and cut[0] in text_terms(said_it.text)
    [found] = [p for p in passages([said_it], [cut]) if p.matched]
    assert found.text == said_it.text
