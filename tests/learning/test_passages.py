"""The passages of a found conversation: the exchanges around the messages holding the
question's words, best first, within the room the conversation is given."""

from __future__ import annotations

from datetime import UTC, datetime

from app.learning.conversation_record import said
from app.learning.passages import MAX_FOUND, PASSAGE_CHARS, passages
from app.learning.search_terms import query_terms

AT = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def conversation() -> list:
    return [
        said("user", "Let's plan the budget for the launch.", at=AT, ts="1770000000.000100"),
        said("assistant", "The budget looks fine; the launch is on track.", at=AT),
        said("user", "Sam gave me the new code: 4471.", at=AT, ts="1770000001.000100"),
        said("user", "It's for the storage room, I keep forgetting it.", at=AT),
        said("assistant", "Noted.", at=AT),
        said("user", "What should I bring to the barbecue on Saturday?", at=AT),
        said("assistant", "A lemon tart would travel well.", at=AT, ts="1770000002.000100"),
        said("user", "Perfect, let's go with that.", at=AT),
        said("user", "Back to the budget.", at=AT),
    ]


def test_the_answer_next_to_the_words_is_shown_the_message_before_and_the_reply_after() -> None:
    found = passages(conversation(), query_terms("what was I bringing to the barbecue?"))
    texts = [p.text for p in found]
    # The question's words are in the person's message; the answer is Orion's reply.
    assert "A lemon tart would travel well." in texts
    assert texts.index("What should I bring to the barbecue on Saturday?") + 1 == texts.index(
        "A lemon tart would travel well."
    )
    [matched] = [p for p in found if p.matched]
    assert matched.text.startswith("What should I bring")
    # And the code said one message before the one naming the room.
    room = [p.text for p in passages(conversation(), query_terms("storage room code"))]
    assert "Sam gave me the new code: 4471." in room


def test_exchanges_that_touch_are_merged_and_come_in_the_order_said() -> None:
    found = passages(conversation(), query_terms("code storage room"))
    texts = [p.text for p in found]
    assert len(texts) == len(set(texts))
    said_order = [m.text for m in conversation()]
    assert texts == sorted(texts, key=said_order.index)


def test_the_best_exchange_comes_first_and_the_room_is_kept() -> None:
    messages = conversation()
    words = query_terms("barbecue budget")
    small = passages(messages, words, room=120)
    # Little room: the message with the rarer word (the barbecue) and what fits beside it.
    assert any(p.matched and "barbecue" in p.text for p in small)
    assert sum(len(p.text) for p in small) <= 200
    assert not any("Back to the budget" in p.text for p in small)
    wide = passages(messages, words, room=5_000)
    assert any("Back to the budget" in p.text for p in wide) and len(wide) > len(small)


def test_a_long_message_is_cut_around_the_word_found() -> None:
    text = "filler " * 1000 + "the recital is on Friday " + "filler " * 1000
    [found] = passages([said("user", text, at=AT)], query_terms("recital"))
    assert "recital is on Friday" in found.text
    assert len(found.text) <= PASSAGE_CHARS + 2 and found.text.startswith("…")


def test_words_inside_other_words_and_hostile_repeats_cost_bounded_work() -> None:
    text = "xbudget " * 5_000  # the word only inside others, thousands of times
    assert passages([said("user", text, at=AT)], query_terms("budget")) == []
    repeated = "budget " * 5_000
    [found] = passages([said("user", repeated, at=AT)], query_terms("budget"))
    assert len(found.text) <= PASSAGE_CHARS + 2
    assert MAX_FOUND < 5_000


def test_no_words_give_the_opening_and_the_newest_message() -> None:
    messages = [said("user", f"message {n}", at=AT) for n in range(5)]
    assert [p.text for p in passages(messages, [])] == ["message 0", "message 4"]
    assert passages([], query_terms("budget")) == []


def test_greetings_with_a_name_do_not_crowd_out_what_was_said_about_it() -> None:
    greetings = [said("assistant", f"Thanks, Sam! Here is draft {n}.", at=AT) for n in range(8)]
    content = said("user", "Sam says the venue is the Botanical Garden pavilion.", at=AT)
    messages = [*greetings[:4], content, *greetings[4:]]
    found = passages(messages, query_terms("What did Sam say about the venue?"), room=200)
    assert next(p.text for p in found if p.matched) == content.text


def test_the_second_reply_after_the_words_comes_before_the_message_before_them() -> None:
    messages = [
        said("assistant", "Here is a long draft about the quarterly report. " * 2, at=AT),
        said("user", "The builders gave us a finish date for the kitchen.", at=AT),
        said("assistant", "When?", at=AT),
        said("user", "The first week of May, if the worktop arrives in time.", at=AT),
    ]
    found = passages(messages, query_terms("kitchen finish date"), room=300)
    texts = [p.text for p in found]
    assert "The first week of May, if the worktop arrives in time." in texts
    assert not any("quarterly report" in text for text in texts)  # no room left for it
