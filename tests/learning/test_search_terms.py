"""What `recall` matches on in each script, and how it ranks (search_terms, search_ranking)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.learning.search_index import SearchIndex, document_for
from app.learning.search_ranking import MAX_POSTINGS, TimeRange, rank
from app.learning.search_terms import (
    MAX_QUERY_TERMS,
    MAX_TERM_CHARS,
    document_terms,
    normalise,
    query_terms,
    text_terms,
)

NOW = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Réunion d'ÉQUIPE", "reunion d'equipe"),  # accents and case folded
        ("Straße", "strasse"),  # casefold, not lower
        ("ＱＵＡＲＴＥＲ ３", "quarter 3"),  # NFKC: full-width letters and digits
        ("ﬁnance", "finance"),  # NFKC: ligature
        ("ΣΥΖΉΤΗΣΗ", "συζητηση"),  # Greek: tonos dropped, final sigma folded
        ("Ёлка", "елка"),  # Cyrillic: ё is е
        ("हिन्दी", "हिन्दी"),  # Devanagari vowel signs and virama stay
        ("한국어", "한국어"),  # Hangul syllables stay whole (not Jamo)
        ("ガイド", "ガイド"),  # kana voicing marks stay
    ],
)
def test_text_is_normalised_the_same_way_everywhere(text: str, expected: str) -> None:
    assert normalise(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Q3 budgets, the Q3 BUDGET!", ["q3", "budget", "q3", "budget"]),  # stems; "the" out
        ("My daughter's piano recitals", ["daughter", "piano", "recit"]),
        ("Réunions budgétaires de l'équipe", ["reunion", "budgetair", "equip"]),  # French's
        ("Die Besprechungen im Büro", ["besprech", "buro"]),  # German's
        ("Бюджет на маркетинг", ["бюджет", "маркетинг"]),  # Russian's
        ("Ο προϋπολογισμός", ["προυπολογ"]),  # Greek's
        ("الميزانية والتسويق", ["ميزان", "تسويق"]),  # the article cut, then Arabic's
        ("תקציב השיווק", ["תקציב", "השיווק"]),  # no stemmer: as written
        ("बजट बैठकें", ["बजट", "बैठक"]),  # Hindi's
        ("予算会議", ["予算", "算会", "会議"]),  # Japanese/Chinese: overlapping pairs
        ("예산 회의", ["예산", "회의"]),
        ("งบประมาณ", ["งบ", "บป", "ปร", "ระ", "ะม", "มา", "าณ"]),  # Thai: pairs
        ("猫", ["猫"]),  # a one-character word is itself
        ("GPT4を使う", ["gpt4", "を使", "使う"]),  # scripts split inside one run
        ("5月の出張", ["5月", "月の", "の出", "出張"]),  # a number and what it counts: a term
        ("snake_case", ["snake", "case"]),
    ],
)
def test_each_script_is_cut_into_the_terms_it_is_searched_by(
    text: str, expected: list[str]
) -> None:
    assert text_terms(text) == expected


def test_questions_leave_out_the_words_that_only_ask_and_try_each_languages_stem() -> None:
    assert query_terms("What did we discuss about the Q3 budget last week?") == [
        ("q3",),
        ("budget", "budg"),
    ]
    assert query_terms("When is my daughter's recital?") == [
        ("daughter", "daught"),
        ("recit", "recital"),
    ]
    assert query_terms("Что мы обсуждали о бюджете?") == [("бюджет",)]
    # Japanese, Chinese, Korean and Thai phrases that only ask are cut before the pairs.
    assert query_terms("予算について何を話しましたか") == [("予算",)]
    assert query_terms("我们关于预算讨论了什么") == [("预算",)]
    assert query_terms("เราคุยอะไรกันเรื่องงบประมาณ") == [("งบ",), ("ปร",), ("ะม",), ("าณ",)]
    assert query_terms("what did we talk about?") == []


def test_questions_and_documents_are_bounded() -> None:
    assert text_terms("a" * 40_000) == ["a" * MAX_TERM_CHARS]
    words = " ".join(f"w{n}" for n in range(1000))
    assert len(document_terms([(words, 1), (words, 1)], limit=200)) == 200
    assert len(query_terms(words)) == MAX_QUERY_TERMS
    assert len(query_terms("予算" * 20_000)) <= MAX_QUERY_TERMS


def _index(*conversations: tuple[str, str, str]) -> SearchIndex:
    """Entries for (thread, title, body), the first the newest."""
    index = SearchIndex()
    index.add(
        document_for(thread, title, body, [], NOW - n * timedelta(hours=1))
        for n, (thread, title, body) in enumerate(conversations)
    )
    return index


def _ranked(index: SearchIndex, question: str, limit: int = 5, **options: object) -> list[str]:
    return [r.thread_ts for r in rank(index, query_terms(question), limit, **options)]  # type: ignore[arg-type]


def test_rare_words_outweigh_common_ones() -> None:
    index = _index(
        ("1.1", "Weekly meeting", "The weekly meeting: hiring and budget."),
        ("2.2", "Meeting notes", "Another meeting about the roadmap."),
        ("3.3", "Kubernetes migration", "The meeting about the kubernetes migration."),
        ("4.4", "Meeting", "A meeting."),
    )
    assert _ranked(index, "meeting about kubernetes")[0] == "3.3"


def test_a_word_in_the_title_counts_more_and_equal_scores_go_newest_first() -> None:
    index = _index(
        ("1.1", "Offsite", "Notes on the budget."),
        ("2.2", "Budget review", "Numbers."),
        ("3.3", "Offsite", "Notes on the budget."),
    )
    assert _ranked(index, "budget") == ["2.2", "1.1", "3.3"]


def test_inflected_and_unaccented_forms_find_each_other() -> None:
    index = _index(
        ("1.1", "Бюджет на маркетинг", "Урезать рекламу."),
        ("2.2", "Réunions d'équipe", "Planning des congés."),
        ("3.3", "Budgets", "Vendor contracts."),
        ("4.4", "Piano", "My daughter's recitals are on Friday."),
    )
    assert _ranked(index, "о бюджете")[0] == "1.1"
    assert _ranked(index, "reunion equipe")[0] == "2.2"
    assert _ranked(index, "budget")[0] == "3.3"
    assert _ranked(index, "When is my daughter's recital?")[0] == "4.4"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("来期の予算会議について", "1.1"),
        ("预算会议", "2.2"),
        ("예산 회의는 어땠나요?", "3.3"),
        ("เรื่องงบประมาณการตลาด", "4.4"),
        ("ماذا عن الميزانية؟", "5.5"),
        ("Τι είπαμε για τον προϋπολογισμό;", "6.6"),
    ],
)
def test_each_script_finds_its_own_conversation(question: str, expected: str) -> None:
    index = _index(
        ("1.1", "予算会議の準備", "来期の予算会議に向けてクラウド費用を削減する。"),
        ("2.2", "预算会议", "我们讨论了明年的预算会议。"),
        ("3.3", "예산 회의", "다음 분기 예산 회의를 준비했습니다."),
        ("4.4", "งบประมาณการตลาด", "ทบทวนงบประมาณการตลาดของไตรมาสนี้"),
        ("5.5", "الميزانية", "راجعنا الميزانية للربع القادم."),
        ("6.6", "Προϋπολογισμός", "Συζητήσαμε τον προϋπολογισμό."),
        ("7.7", "Weekly sync", "Nothing in particular."),
    )
    assert _ranked(index, question)[0] == expected


def test_a_month_written_in_digits_finds_what_was_said_of_it() -> None:
    index = _index(
        ("1.1", "学会", "3月は学会でバレンシアに行くので、その週は空けておいてください。"),
        ("2.2", "学会", "5月は学会でタリンに行くので、その週は空けておいてください。"),
    )
    assert _ranked(index, "5月 出張") == ["2.2"]


def test_nothing_matching_is_nothing_and_no_terms_is_the_newest() -> None:
    index = _index(("1.1", "Budget", "x"), ("2.2", "Hiring", "y"))
    assert _ranked(index, "kubernetes") == []
    assert _ranked(index, "what did we talk about?", limit=1) == ["1.1"]
    assert rank(SearchIndex(), [("budget",)], 5) == []


def test_the_current_thread_is_left_out() -> None:
    index = _index(("1.1", "Budget", "x"), ("2.2", "Budget", "y"))
    assert _ranked(index, "budget", exclude="1.1") == ["2.2"]


def test_a_time_range_names_the_conversations_held_then_beside_the_best_matches() -> None:
    index = _index(("1.1", "Budget", "x"), ("2.2", "Hiring", "y"), ("3.3", "Budget", "z"))
    start = int((NOW - timedelta(minutes=90)).timestamp())
    end = int((NOW - timedelta(minutes=30)).timestamp())
    within = TimeRange(start, end)  # only the second conversation went on then
    # Held then, no word of it: named first; the matches from other times still come.
    assert _ranked(index, "budget", within=within) == ["2.2", "1.1", "3.3"]
    # Held then and matching first; then the best match not yet taken, then the rest held then.
    assert _ranked(index, "budget", within=TimeRange(after=start)) == ["1.1", "3.3", "2.2"]


def test_a_word_found_everywhere_costs_at_most_the_postings_budget() -> None:
    # Every entry holds the word: read up to the budget, the rest not at all.
    entries = MAX_POSTINGS + 500
    index = SearchIndex()
    index.add(
        document_for(f"{n}.1", "Budget", "", [], NOW - n * timedelta(seconds=1))
        for n in range(entries)
    )
    credited = rank(index, query_terms("budget"), limit=entries)
    assert 0 < len(credited) <= MAX_POSTINGS
