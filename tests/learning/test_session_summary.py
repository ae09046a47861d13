"""The conversation's summary: its format, what is summarised, and the rolling update at
each turn end (app/learning/session_summary.py), which leaves the newest one in the
owner's profile with the conversation's entry."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from app.agent.history import ThreadMessage
from app.agent.summarizer import parse_draft, summary_prompt
from app.learning.guard import Guard
from app.learning.profile import Profile
from app.learning.session_summary import SummaryOutcome, learn_from_turn
from app.learning.summary_file import (
    MAX_SUMMARY_CHARS,
    MAX_TITLE_CHARS,
    Summary,
    SummaryDraft,
)
from app.learning.transcript import Utterance, conversation, fallback_summary, latest_exchange
from app.learning.welcome import freshest_summary, welcome_of
from app.memory.homes import person
from app.storage.store import ObjectStore
from tests.backends import OTHER_THREAD, THREAD, USER, Backend

HOME = person(USER)
NOW = datetime(2026, 5, 4, 10, 12, tzinfo=UTC)
GREETING = ThreadMessage("assistant", "Hi, I'm Orion. How can I help?")
QUESTION = ThreadMessage("user", "How do we cut the Q3 cloud bill? It is 20% over plan.")
ANSWER = ThreadMessage("assistant", "Move the nightly batch jobs to spot instances first.")
FOLLOW_UP = ThreadMessage("user", "Draft the proposal for finance.")
DRAFT = ThreadMessage("assistant", "Here is a draft for finance: spot instances save 30%.")


class FakeSummarizer:
    """Records what it was given; answers with a fixed draft or raises."""

    def __init__(self, draft: SummaryDraft | None = None, error: Exception | None = None):
        self.draft = draft or SummaryDraft("Q3 cloud bill", "Spot instances for batch jobs.")
        self.error = error
        self.calls: list[tuple[Summary | None, list[str]]] = []

    async def __call__(
        self, previous: Summary | None, new_messages: Sequence[Utterance]
    ) -> SummaryDraft:
        self.calls.append((previous, [m.text for m in new_messages]))
        if self.error is not None:
            raise self.error
        return self.draft


async def _update(
    store: ObjectStore,
    history: list[ThreadMessage],
    summarize: FakeSummarizer,
    thread: str = THREAD,
    now: datetime = NOW,
) -> SummaryOutcome:
    """A turn end, from the summary the conversation has (as a turn reads it)."""
    guard = await Guard.reading(store, HOME)
    previous = freshest_summary(guard.profile, thread, None, cutoff=None)
    return await learn_from_turn(
        guard,
        thread_ts=thread,
        channel="D0123ABCD",
        history=history,
        previous=previous,
        summarize=summarize,
        now=now,
    )


def _latest(backend: Backend) -> Summary | None:
    welcome = welcome_of(Profile.parse(backend.raw_read(HOME.profile_key)))
    return welcome.summary if welcome is not None else None


# --- the summary ------------------------------------------------------------------------------


def test_a_summary_has_a_title_a_body_and_when_it_was_made() -> None:
    summary = Summary("Q3 cloud bill", "Spot instances.", NOW)
    assert summary.to_json() == {
        "title": "Q3 cloud bill",
        "body": "Spot instances.",
        "updated": "2026-05-04T10:12:00Z",
    }
    assert Summary.parse(summary.to_json()) == summary


@pytest.mark.parametrize(
    "item",
    [
        None,
        "Just notes the model wrote.",
        [],
        {"title": "T", "body": "B"},
        {"title": "T", "body": 3, "updated": "2026-05-04T10:12:00Z"},
        {"title": None, "body": "B", "updated": "2026-05-04T10:12:00Z"},
        {"title": "T", "body": "B", "updated": "yesterday"},
    ],
)
def test_a_summary_that_cannot_be_read_is_none(item: object) -> None:
    assert Summary.parse(item) is None


def test_a_summary_is_read_within_its_bounds() -> None:
    item = {"title": "t" * 500, "body": "b" * 50_000, "updated": "2026-05-04T10:12:00Z"}
    parsed = Summary.parse(item)
    assert parsed is not None
    assert len(parsed.title) == MAX_TITLE_CHARS and len(parsed.body) == MAX_SUMMARY_CHARS


# --- what is summarised ---------------------------------------------------------------------


def test_the_greeting_before_the_first_question_is_not_conversation() -> None:
    assert conversation([GREETING, QUESTION, ANSWER]) == [QUESTION, ANSWER]
    assert conversation([ThreadMessage("user", "  "), GREETING]) == []


def test_the_latest_exchange_is_the_last_answer_and_what_it_answered() -> None:
    history = [QUESTION, ANSWER, FOLLOW_UP, ThreadMessage("user", "Short, please."), DRAFT]
    assert latest_exchange(history) == history[2:]
    assert latest_exchange([QUESTION]) == [QUESTION]


def test_the_fallback_quotes_both_sides_and_keeps_the_previous_summary() -> None:
    first = fallback_summary(None, [QUESTION, ANSWER])
    assert first.title == QUESTION.text
    assert first.body == (f"- The person said: {QUESTION.text}\n- Orion answered: {ANSWER.text}")
    previous = Summary("Q3 cloud bill", "Spot instances for batch jobs.", NOW)
    second = fallback_summary(previous, [FOLLOW_UP, DRAFT])
    assert second.title == "Q3 cloud bill"
    assert second.body.startswith("Spot instances for batch jobs.\n- The person said: Draft")


def test_the_fallback_stays_bounded_however_long_the_thread() -> None:
    huge = ThreadMessage("user", "word " * 5_000)
    previous = Summary("Long", "\n".join(f"- point {n}" for n in range(1_000)), NOW)
    draft = fallback_summary(previous, [huge, ANSWER])
    assert len(draft.body) <= MAX_SUMMARY_CHARS
    assert draft.body.startswith("- point 0")  # the gist of the thread survives
    assert draft.body.endswith(ANSWER.text)  # and so does the newest exchange


def test_the_model_reply_is_split_into_title_and_summary() -> None:
    assert parse_draft("# Q3 bill\nSpot instances.") == SummaryDraft("Q3 bill", "Spot instances.")
    assert parse_draft("Title: Q3 bill\nSpot.") == SummaryDraft("Q3 bill", "Spot.")
    assert parse_draft("Spot.", fallback_title="Old") == SummaryDraft("Old", "Spot.")
    with pytest.raises(ValueError):
        parse_draft("# Only a title")


def test_the_welcome_lines_come_off_the_end_of_the_summary() -> None:
    reply = "# Q3 bill\nSpot instances.\nWelcome: Bon retour !\nNext: Reprendre le budget"

    assert parse_draft(reply) == SummaryDraft(
        "Q3 bill", "Spot instances.", welcome="Bon retour !", next_step="Reprendre le budget"
    )
    assert parse_draft("# T\nBody.\nWelcome: Hi again.").next_step is None
    with pytest.raises(ValueError):
        parse_draft("# T\nWelcome: no summary at all")


def test_the_prompt_carries_the_previous_summary_and_the_new_messages() -> None:
    prompt = summary_prompt(Summary("Q3 bill", "Spot.", NOW), [FOLLOW_UP, DRAFT])
    assert "<previous_summary>\n# Q3 bill\nSpot.\n</previous_summary>" in prompt
    assert f"Person: {FOLLOW_UP.text}\n\nOrion: {DRAFT.text}" in prompt
    assert "no previous summary" in summary_prompt(None, [QUESTION])


# --- the update -------------------------------------------------------------------------------


async def test_a_short_thread_is_not_summarised(store: ObjectStore, backend: Backend) -> None:
    summarize = FakeSummarizer()
    history = [GREETING, ThreadMessage("user", "Hi!"), ThreadMessage("assistant", "Hello.")]
    outcome = await _update(store, history, summarize)
    assert (outcome.written, outcome.source) == (False, "skipped")
    assert summarize.calls == [] and backend.raw_names() == []


async def test_each_turn_rolls_the_summary_forward(store: ObjectStore, backend: Backend) -> None:
    summarize = FakeSummarizer()
    outcome = await _update(store, [GREETING, QUESTION, ANSWER], summarize)
    assert (outcome.written, outcome.source) == (True, "model")
    # First summary: the whole conversation, no previous summary, no greeting.
    assert summarize.calls == [(None, [QUESTION.text, ANSWER.text])]

    summarize.draft = SummaryDraft("Q3 cloud bill", "Spot instances; proposal drafted.")
    await _update(store, [GREETING, QUESTION, ANSWER, FOLLOW_UP, DRAFT], summarize)
    previous, new = summarize.calls[1]
    assert previous is not None and previous.body == "Spot instances for batch jobs."
    assert new == [FOLLOW_UP.text, DRAFT.text]

    assert _latest(backend) == Summary("Q3 cloud bill", "Spot instances; proposal drafted.", NOW)
    [entry] = Profile.parse(backend.raw_read(HOME.profile_key)).conversations
    assert (entry.thread_ts, entry.title, entry.updated) == (THREAD, "Q3 cloud bill", NOW)


async def test_a_failing_model_means_the_fallback_is_written(
    store: ObjectStore, backend: Backend
) -> None:
    outcome = await _update(
        store, [QUESTION, ANSWER], FakeSummarizer(error=TimeoutError("too slow"))
    )
    assert (outcome.written, outcome.source, outcome.failure) == (True, "fallback", "TimeoutError")
    stored = _latest(backend)
    assert stored is not None and stored.title == QUESTION.text
    assert ANSWER.text in stored.body


async def test_an_empty_model_reply_means_the_fallback_too(store: ObjectStore) -> None:
    outcome = await _update(store, [QUESTION, ANSWER], FakeSummarizer(SummaryDraft("T", "  ")))
    assert outcome.source == "fallback" and outcome.failure == "ValueError"


async def test_the_profile_lists_each_conversation_once_newest_first(
    store: ObjectStore, backend: Backend
) -> None:
    await _update(store, [QUESTION, ANSWER], FakeSummarizer(), thread=THREAD)
    await _update(store, [QUESTION, ANSWER], FakeSummarizer(), thread=OTHER_THREAD)
    later = datetime(2026, 5, 5, tzinfo=UTC)
    renamed = FakeSummarizer(SummaryDraft("Renamed", "Body."))
    await _update(store, [QUESTION, ANSWER, FOLLOW_UP, DRAFT], renamed, now=later)

    profile = Profile.parse(backend.raw_read(HOME.profile_key))
    assert [(e.thread_ts, e.title) for e in profile.conversations] == [
        (THREAD, "Renamed"),
        (OTHER_THREAD, "Q3 cloud bill"),
    ]
    latest = welcome_of(profile)
    assert latest is not None and (latest.thread_ts, latest.topic) == (THREAD, "Renamed")
