"""What Claude is sent of a thread: the newest messages within bounds, the opening request
kept, and the cut marked."""

from __future__ import annotations

from app.agent.history import (
    CUT_NOTE,
    MAX_HISTORY_MESSAGES,
    MAX_HISTORY_TOKENS,
    TRIM_NOTE,
    ThreadMessage,
    build_messages,
)
from app.memory.token_estimate import estimate_tokens


def user(text: str, *, opens_cut: bool = False) -> ThreadMessage:
    return ThreadMessage("user", text, opens_cut=opens_cut)


def orion(text: str) -> ThreadMessage:
    return ThreadMessage("assistant", text)


def test_a_short_thread_is_sent_whole_without_a_note() -> None:
    thread = [orion("Hi, how can I help?"), user("Plan my week."), orion("Sure."), user("Go.")]

    messages = build_messages(thread)

    assert messages == [
        {"role": "user", "content": "Plan my week."},
        {"role": "assistant", "content": "Sure."},
        {"role": "user", "content": "Go."},
    ]


def test_the_newest_messages_fill_the_bounds_and_the_opening_stays_with_a_note() -> None:
    thread = [user("The opening request.")]
    for n in range(100):
        thread += [orion(f"answer {n}"), user(f"question {n}")]

    messages = build_messages(thread)

    assert len(messages) <= MAX_HISTORY_MESSAGES
    # (Consecutive messages of one role are merged: the note sits between them.)
    assert messages[0]["content"].startswith("The opening request." + CUT_NOTE)
    assert messages[-1]["content"] == "question 99"
    assert "answer 99" in messages[-2]["content"]
    assert not any("question 50" in m["content"] for m in messages)


def test_a_window_read_after_a_cut_is_marked_even_when_it_all_fits() -> None:
    thread = [user("The opening request.", opens_cut=True), orion("answer 7"), user("next?")]

    messages = build_messages(thread)

    assert messages[0]["content"] == "The opening request." + CUT_NOTE
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]


def test_a_huge_opening_is_trimmed_and_the_whole_stays_within_the_budget() -> None:
    huge = "x" * (MAX_HISTORY_TOKENS * 4)
    thread = [ThreadMessage("user", huge), orion("ok"), user("What now?")]

    messages = build_messages(thread)

    assert messages[0]["content"].startswith("x" * 100) and TRIM_NOTE in messages[0]["content"]
    assert messages[-1]["content"] == "What now?"
    assert sum(estimate_tokens(m["content"]) for m in messages) <= MAX_HISTORY_TOKENS
