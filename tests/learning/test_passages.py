"""The passages of a found conversation: the messages holding the question's words."""

from __future__ import annotations

from datetime import UTC, datetime

from app.learning.conversation_record import said
from app.learning.passages import MAX_FOUND, PASSAGE_CHARS, passages
from app.learning.search_terms import query_terms

AT = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def test_the_messages_holding_the_rarer_words_come_first_in_the_order_said() -> None:
    messages = [
        said("user", "Let's plan the budget for the launch.", at=AT, ts="1770000000.000100"),
        said("assistant", "The budget looks fine; the launch is on track.", at=AT),
        said("user", "Our puppy Biscuit chewed the projector cable.", at=AT, ts="1770000001.1"),
        said("user", "Back to the budget.", at=AT),
    ]
    found = passages(messages, query_terms("puppies chewing cables"), limit=1)
    assert [p.text for p in found] == ["Our puppy Biscuit chewed the projector cable."]
    assert found[0].ts == "1770000001.1" and found[0].role == "user"
    # Two words of the question in two messages: both, in the order they were said.
    both = passages(messages, query_terms("budget projector"), limit=2)
    assert [p.text[:10] for p in both] == ["Let's plan", "Our puppy "]


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
