"""The session summary: its file format, what is summarised, and the rolling update."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from app.agent.history import ThreadMessage
from app.agent.summarizer import parse_draft, summary_prompt
from app.learning.session_index import IndexedToday, SessionEntry, parse_index
from app.learning.session_summary import update_session_summary
from app.learning.summary_file import (
    MAX_SUMMARY_CHARS,
    SessionSummary,
    SummaryDraft,
    parse_summary,
    render_summary,
)
from app.learning.transcript import Utterance, conversation, fallback_summary, latest_exchange
from app.memory.scopes import conversations_index_key
from app.storage.store import ObjectStore
from tests.backends import OTHER_THREAD, THREAD, USER, Backend

KEY = "sessions/1712345678-123456/context.md"
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
        self.calls: list[tuple[SessionSummary | None, list[str]]] = []

    async def __call__(
        self, previous: SessionSummary | None, new_messages: Sequence[Utterance]
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
):
    return await update_session_summary(
        store, user_id=USER, thread_ts=thread, history=history, summarize=summarize, now=NOW
    )


# --- the file -------------------------------------------------------------------------------


def test_the_file_has_a_title_a_timestamp_the_user_and_the_summary() -> None:
    summary = SessionSummary("Q3 cloud bill", "Spot instances.", user_id=USER, updated=NOW)
    text = render_summary(summary)
    assert text == (
        f"# Q3 cloud bill\n\nLast updated: 2026-05-04T10:12:00Z\nUser: {USER}\n\nSpot instances.\n"
    )
    assert parse_summary(text) == summary


@pytest.mark.parametrize(
    ("text", "title", "body"),
    [
        ("Just notes the model wrote.", "Conversation with Orion", "Just notes the model wrote."),
        ("# Title only", "Title only", ""),
        ("#   Spaced  \n\nbody\nmore", "Spaced", "body\nmore"),
        ("", "Conversation with Orion", ""),
    ],
)
def test_hand_written_files_are_read_tolerantly(text: str, title: str, body: str) -> None:
    parsed = parse_summary(text)
    assert (parsed.title, parsed.body, parsed.user_id, parsed.updated) == (title, body, None, None)


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
    previous = SessionSummary("Q3 cloud bill", "Spot instances for batch jobs.")
    second = fallback_summary(previous, [FOLLOW_UP, DRAFT])
    assert second.title == "Q3 cloud bill"
    assert second.body.startswith("Spot instances for batch jobs.\n- The person said: Draft")


def test_the_fallback_stays_bounded_however_long_the_thread() -> None:
    huge = ThreadMessage("user", "word " * 5_000)
    previous = SessionSummary("Long", "\n".join(f"- point {n}" for n in range(1_000)))
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
    prompt = summary_prompt(SessionSummary("Q3 bill", "Spot."), [FOLLOW_UP, DRAFT])
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

    stored = parse_summary(backend.raw_read(KEY) or "")
    assert stored == SessionSummary(
        "Q3 cloud bill", "Spot instances; proposal drafted.", user_id=USER, updated=NOW
    )
    [entry] = parse_index(backend.raw_read(conversations_index_key(USER)))
    assert (entry.thread_ts, entry.title, entry.updated) == (THREAD, "Q3 cloud bill", NOW)


async def test_a_failing_model_means_the_fallback_is_written(
    store: ObjectStore, backend: Backend
) -> None:
    outcome = await _update(
        store, [QUESTION, ANSWER], FakeSummarizer(error=TimeoutError("too slow"))
    )
    assert (outcome.written, outcome.source, outcome.failure) == (True, "fallback", "TimeoutError")
    stored = parse_summary(backend.raw_read(KEY) or "")
    assert stored.title == QUESTION.text and stored.user_id == USER
    assert ANSWER.text in stored.body


async def test_an_empty_model_reply_means_the_fallback_too(store: ObjectStore) -> None:
    outcome = await _update(store, [QUESTION, ANSWER], FakeSummarizer(SummaryDraft("T", "  ")))
    assert outcome.source == "fallback" and outcome.failure == "ValueError"


async def test_a_summary_written_meanwhile_is_built_on_not_overwritten(
    store: ObjectStore, backend: Backend
) -> None:
    await _update(store, [QUESTION, ANSWER], FakeSummarizer())

    class Racing(FakeSummarizer):
        async def __call__(self, previous, new_messages):  # type: ignore[no-untyped-def]
            # Another instance finishes its own update of this thread while we summarise.
            other = SessionSummary("Q3 cloud bill", "Their version.", user_id=USER, updated=NOW)
            await store.write(KEY, render_summary(other))
            return await super().__call__(previous, new_messages)

    await _update(store, [QUESTION, ANSWER, FOLLOW_UP, DRAFT], Racing())
    body = parse_summary(backend.raw_read(KEY) or "").body
    assert body.startswith("Their version.")
    assert FOLLOW_UP.text in body and DRAFT.text in body


async def test_the_index_lists_each_thread_once_newest_first(
    store: ObjectStore, backend: Backend
) -> None:
    await _update(store, [QUESTION, ANSWER], FakeSummarizer(), thread=THREAD)
    await _update(store, [QUESTION, ANSWER], FakeSummarizer(), thread=OTHER_THREAD)
    later = datetime(2026, 5, 5, tzinfo=UTC)
    await update_session_summary(
        store,
        user_id=USER,
        thread_ts=THREAD,
        history=[QUESTION, ANSWER, FOLLOW_UP, DRAFT],
        summarize=FakeSummarizer(SummaryDraft("Renamed", "Body.")),
        now=later,
    )
    raw = json.loads(backend.raw_read(conversations_index_key(USER)) or "")
    assert [(e["thread"], e["title"]) for e in raw] == [
        (THREAD, "Renamed"),
        (OTHER_THREAD, "Q3 cloud bill"),
    ]


async def test_the_index_entry_is_rewritten_once_a_day_or_when_the_title_changes(
    store: ObjectStore, backend: Backend
) -> None:
    history = [QUESTION, ANSWER]
    indexed = IndexedToday()

    async def turn(at: datetime, title: str = "Q3 cloud bill") -> list[tuple[str, datetime]]:
        history.extend([FOLLOW_UP, DRAFT])
        await update_session_summary(
            store,
            user_id=USER,
            thread_ts=THREAD,
            history=history,
            summarize=FakeSummarizer(SummaryDraft(title, "Body.")),
            indexed=indexed,
            now=at,
        )
        entries = parse_index(backend.raw_read(conversations_index_key(USER)))
        return [(e.title, e.updated) for e in entries]

    assert await turn(NOW) == [("Q3 cloud bill", NOW)]
    # Later the same day, same title: the entry already says "today".
    assert await turn(NOW + timedelta(hours=3)) == [("Q3 cloud bill", NOW)]
    # A new title is written at once.
    renamed_at = NOW + timedelta(hours=4)
    assert await turn(renamed_at, "Finance proposal") == [("Finance proposal", renamed_at)]
    # The first turn of the next day refreshes it.
    next_day = NOW + timedelta(days=1)
    assert await turn(next_day, "Finance proposal") == [("Finance proposal", next_day)]
    # An instance that has not written it (another one, or this one restarted) does.
    indexed = IndexedToday()
    later = next_day + timedelta(hours=1)
    assert await turn(later, "Finance proposal") == [("Finance proposal", later)]


def test_what_was_indexed_today_is_bounded() -> None:
    indexed = IndexedToday(max_entries=2)
    entries = [SessionEntry(f"1712345678.00000{n}", "Title", NOW) for n in range(3)]
    for entry in entries:
        indexed.remember(USER, entry)
    assert [indexed.covers(USER, entry) for entry in entries] == [False, True, True]
    assert not indexed.covers("U0OTHER", entries[2])


def test_a_damaged_index_is_read_as_far_as_it_goes() -> None:
    assert parse_index("not json") == [] and parse_index('{"a": 1}') == []
    raw = json.dumps(
        [
            {"thread": THREAD, "title": "Good", "updated": "2026-05-04T10:12:00Z"},
            {"thread": "../../etc", "title": "Bad thread", "updated": "2026-05-04T10:12:00Z"},
            {"thread": OTHER_THREAD, "title": "Bad date", "updated": "yesterday"},
            "junk",
        ]
    )
    assert [e.title for e in parse_index(raw)] == ["Good"]
