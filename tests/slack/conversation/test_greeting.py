"""What a thread opens with, and the prompts Orion suggests: for a first-time person, a
returning person whose preferences Orion knows, a person with a welcome prepared at their
last turn end (in their own language), and a person whose welcome is stale. And the title
and prompts at the top of the Messages tab (agent_view).

The staleness rule lives in `greeting_of` (the thread start's and `orion chat`'s), which
gets what the thread start read from the store: those tests write the person's profile and
preferences into a real store and read them back the way the listener does.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from app.learning.conversation_record import ConversationOwner
from app.learning.opening import open_event
from app.learning.preferences import Preference, parse_preferences, save_preferences
from app.learning.welcome import Welcome
from app.memory.formatting import render_preferences
from app.memory.homes import person, preferences_key
from app.slack.conversation.greeting import (
    GENERIC_GREETING,
    greeting_of,
    messages_tab_prompts,
    thread_greeting,
)
from app.slack.conversation.greeting_words import GREETING_WORDS
from app.storage.store import ObjectStore
from tests.backends import THREAD, USER
from tests.layout import profile

STARTERS = ["What do you remember about me?", "Set my preferences", "Recap our last conversation"]
# Léa asked for French: the prompts under her greeting are French too.
LEAS_STARTERS = [
    "Que sais-tu de moi ?",
    "Régler mes préférences",
    "Résumer notre dernière conversation",
]
RETENTION_DAYS = 30

LEA = {"name": "Léa", "language": "French"}
BUDGET_WELCOME = Welcome(
    thread_ts="1712000000.000100",
    topic="Revue du budget T3",
    updated=datetime.now(UTC),
    greeting="Bon retour, Léa ! On reprend la revue du budget T3 ?",
    next_step="Reprendre la revue du budget T3",
)


def titles(prompts: list[dict[str, str]]) -> list[str]:
    return [p["title"] for p in prompts]


# --- a first-time person ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "preferences",
    [None, "", "{}", "not json at all", '["a", "list"]', '{"_learned": {}}'],
    ids=["no-file", "empty", "empty-object", "not-json", "not-an-object", "bookkeeping-only"],
)
def test_a_person_orion_knows_nothing_usable_about_gets_the_plain_welcome_and_starter_prompts(
    preferences: str | None,
) -> None:
    greeting = thread_greeting(preferences, None)

    assert greeting.text.startswith("Hi, I'm Orion.")
    assert "Welcome back" not in greeting.text
    assert titles(greeting.prompts) == STARTERS
    assert all(p["message"] for p in greeting.prompts), "each prompt sends something"


# --- a returning person, known by their preferences ------------------------------------------


def test_a_returning_person_is_welcomed_by_name_with_two_of_their_preferences() -> None:
    preferences = {
        "name": "Sam",
        "response_style": "short answers",
        "timezone": "Europe/Paris",
        "team": "Payments",
    }

    greeting = thread_greeting(json.dumps(preferences), None)

    assert greeting.text == (
        "Welcome back, Sam! I'll keep your preferences in mind "
        "(response style: short answers; timezone: Europe/Paris). How can I help today?"
    )
    assert "Payments" not in greeting.text, "at most two preferences are mentioned"
    assert titles(greeting.prompts) == STARTERS


@pytest.mark.parametrize("key", ["name", "preferred_name", "call_me"])
def test_a_person_known_only_by_name_is_welcomed_by_it_without_a_preference_list(key: str) -> None:
    greeting = thread_greeting(json.dumps({key: "Jo"}), None)

    assert greeting.text == "Welcome back, Jo! How can I help today?"


def test_a_returning_person_without_a_name_gets_an_anonymous_welcome_back() -> None:
    greeting = thread_greeting(json.dumps({"timezone": "Europe/Paris"}), None)

    assert greeting.text == (
        "Welcome back! I'll keep your preferences in mind (timezone: Europe/Paris). "
        "How can I help today?"
    )


# --- one rule for every reader of the file ------------------------------------------------------


def test_a_list_claude_wrote_is_greeted_as_the_home_tab_and_the_prompt_show_it() -> None:
    # The memory tool can write any JSON into the file; what the person is greeted with,
    # what their Home tab lists and what Claude is told are the same preferences.
    stored = json.dumps({"tags": ["a", "b"], "_learned": {}})

    greeting = thread_greeting(stored, None)
    listed = [(p.key, p.value) for p in parse_preferences(stored)]

    assert greeting.text == (
        'Welcome back! I\'ll keep your preferences in mind (tags: ["a", "b"]). '
        "How can I help today?"
    )
    assert listed == [("tags", '["a", "b"]')]
    assert render_preferences(stored) == '- tags: ["a", "b"]'


@pytest.mark.parametrize(
    "stored",
    ["not json at all", '["a", "list"]', "[" * 100_000],
    ids=["not-json", "not-an-object", "nested-past-the-limit"],
)
def test_a_file_that_is_not_an_object_holds_no_preferences_for_any_reader(stored: str) -> None:
    assert thread_greeting(stored, None).text == GENERIC_GREETING
    assert messages_tab_prompts(stored)[0] == "How can I help?"
    assert parse_preferences(stored) == []
    assert render_preferences(stored) == ""


# --- a person with a welcome prepared at their last turn end -----------------------------------


def test_a_saved_welcome_greets_in_the_persons_language_and_offers_to_continue_first() -> None:
    greeting = thread_greeting(json.dumps(LEA), BUDGET_WELCOME)

    assert greeting.text == "Bon retour, Léa ! On reprend la revue du budget T3 ?"
    assert greeting.prompts[0] == {
        "title": "Reprendre la revue du budget T3",
        "message": "Reprendre la revue du budget T3",
    }
    # The follow-up takes the place of "Recap our last conversation".
    assert titles(greeting.prompts) == ["Reprendre la revue du budget T3", *LEAS_STARTERS[:2]]


def test_a_welcome_without_words_of_its_own_greets_from_preferences_and_offers_the_topic() -> None:
    # A welcome saved when the summary model gave no greeting or next step.
    bare = Welcome(
        thread_ts="1712000000.000100", topic="Q3 budget review", updated=BUDGET_WELCOME.updated
    )

    greeting = thread_greeting(json.dumps({"name": "Sam"}), bare)

    assert greeting.text == "Welcome back, Sam! How can I help today?"
    assert titles(greeting.prompts) == ["Continue: Q3 budget review", *STARTERS[:2]]


# --- what the thread-start listener makes of the stored files ----------------------------------


async def _greeting_from(store: ObjectStore) -> tuple[str, list[str]]:
    """The greeting of a thread start, from what it reads (its person's profile and
    preferences)."""
    opening = await open_event(
        store,
        ConversationOwner(USER, "D0LEA"),
        THREAD,
        budget_s=5.0,
        token_budget=2000,
        conversation=False,
    )
    greeting = greeting_of(opening, RETENTION_DAYS)
    return greeting.text, titles(greeting.prompts)


@pytest.mark.parametrize(
    ("age_days", "mentions_the_topic"),
    [(0, True), (RETENTION_DAYS - 1, True), (RETENTION_DAYS + 1, False), (400, False)],
)
async def test_a_welcome_is_used_within_the_retention_window_and_never_after(
    store: ObjectStore, age_days: int, mentions_the_topic: bool
) -> None:
    await store.write(preferences_key(USER), json.dumps(LEA))
    updated = datetime.now(UTC) - timedelta(days=age_days)
    await store.write(
        person(USER).profile_key, profile(welcome=replace(BUDGET_WELCOME, updated=updated))
    )

    text, prompts = await _greeting_from(store)

    if mentions_the_topic:
        assert text == "Bon retour, Léa ! On reprend la revue du budget T3 ?"
        assert prompts[0] == "Reprendre la revue du budget T3"
    else:
        # Stale: the preferences still greet the person (in French, as she asked), "last
        # time" is not brought up.
        assert text.startswith("Bon retour, Léa ! Je garde vos préférences en tête.")
        assert "budget" not in text.casefold()
        assert prompts == LEAS_STARTERS


async def test_an_unreadable_welcome_is_ignored_and_the_preferences_greet(
    store: ObjectStore,
) -> None:
    await store.write(preferences_key(USER), json.dumps(LEA))
    welcome = {"thread": "1712000000.000100", "topic": "x"}  # no time: not Orion's writing
    await store.write(person(USER).profile_key, json.dumps({"version": 2, "welcome": welcome}))

    text, prompts = await _greeting_from(store)

    assert text.startswith("Bon retour, Léa !")
    assert prompts == LEAS_STARTERS


async def test_a_first_time_person_with_nothing_stored_gets_the_plain_welcome(
    store: ObjectStore,
) -> None:
    text, prompts = await _greeting_from(store)

    assert text.startswith("Hi, I'm Orion.")
    assert prompts == STARTERS


async def test_preferences_as_orion_saves_them_greet_without_its_bookkeeping(
    store: ObjectStore,
) -> None:
    learned = [Preference("name", "Léa"), Preference("language", "French")]
    await save_preferences(store, USER, learned, channel="D0LEA", thread_ts=THREAD)
    stored = await store.read(preferences_key(USER))
    assert stored is not None and "_learned" in json.loads(stored.content), "as saved today"

    text, prompts = await _greeting_from(store)
    title, tab_prompts = messages_tab_prompts(stored.content)

    assert text == (
        "Bon retour, Léa ! Je garde vos préférences en tête. "
        "Comment puis-je vous aider aujourd'hui ?"
    )
    assert prompts == LEAS_STARTERS
    assert title == "Bonjour Léa, comment puis-je vous aider ?"
    assert "Revoir mes préférences" in titles(tab_prompts)


def test_without_memory_the_thread_opens_with_the_plain_welcome() -> None:
    # Memory switched off, or nothing could be read: the listener has no restored memory.
    greeting = greeting_of(None, RETENTION_DAYS)

    assert greeting.text.startswith("Hi, I'm Orion.")
    assert titles(greeting.prompts) == STARTERS


# --- the Messages tab (agent_view) --------------------------------------------------------------


def test_the_messages_tab_greets_a_known_person_by_name_and_offers_their_preferences() -> None:
    title, prompts = messages_tab_prompts(json.dumps({"name": "Sam", "timezone": "Europe/Paris"}))

    assert title == "Hi Sam, how can I help?"
    assert titles(prompts) == [
        "What do you remember about me?",
        "Review my preferences",
        "Recap our last conversation",
    ]


def test_the_messages_tab_offers_no_review_to_someone_known_only_by_name() -> None:
    title, prompts = messages_tab_prompts(json.dumps({"call_me": "Sam"}))

    assert title == "Hi Sam, how can I help?"
    assert titles(prompts) == STARTERS


def test_the_messages_tab_offers_a_review_but_no_name_to_someone_known_by_preferences() -> None:
    title, prompts = messages_tab_prompts(json.dumps({"language": "French"}))

    assert title == "Comment puis-je vous aider ?"
    assert titles(prompts) == [
        "Que sais-tu de moi ?",
        "Revoir mes préférences",
        "Résumer notre dernière conversation",
    ]


@pytest.mark.parametrize("preferences", [None, "not json", "[]"])
def test_the_messages_tab_for_a_stranger_has_the_plain_title_and_starters(
    preferences: str | None,
) -> None:
    title, prompts = messages_tab_prompts(preferences)

    assert title == "How can I help?"
    assert titles(prompts) == STARTERS


# --- in the person's language ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ({"name": "Camille", "language": "French"}, "Bon retour, Camille ! "),
        ({"name": "Camille", "language": "Französisch"}, "Bon retour, Camille ! "),
        ({"name": "Jonas", "language": "German"}, "Willkommen zurück, Jonas! "),
        ({"name": "Lucía", "language": "español"}, "¡Hola de nuevo, Lucía! "),
        ({"name": "João", "language": "Portuguese"}, "Que bom ter você de volta, João! "),
        ({"name": "Giulia", "language": "Italian"}, "Ciao di nuovo, Giulia! "),
        ({"name": "Daan", "language": "Dutch"}, "Welkom terug, Daan! "),
        ({"name": "サム", "language": "日本語"}, "サムさん、おかえりなさい！"),
        ({"name": "小明", "language": "Chinese"}, "欢迎回来，小明！"),
        ({"name": "지민", "language": "한국어"}, "지민님, 다시 오셨네요!"),
        # A language Orion does not greet in: English, by name.
        ({"name": "Olga", "language": "Russian"}, "Welcome back, Olga! "),
    ],
)
def test_a_person_who_asked_for_a_language_is_greeted_in_it_by_name(
    stored: dict[str, str], expected: str
) -> None:
    assert thread_greeting(json.dumps(stored), None).text.startswith(expected)


def test_without_a_language_preference_the_language_they_last_spoke_in_greets() -> None:
    # "Appelle-moi Camille", then later "Meine Zeitzone ist Europe/Berlin": the newest
    # statement's language wins.
    learned = {
        "name": {"at": "2026-05-01T09:00:00Z", "said_in": "French"},
        "timezone": {"at": "2026-05-03T09:00:00Z", "said_in": "German"},
    }
    stored = {"name": "Camille", "timezone": "Europe/Berlin", "_learned": learned}

    greeting = thread_greeting(json.dumps(stored), None)

    assert greeting.text == (
        "Willkommen zurück, Camille! Ich behalte deine Präferenzen im Blick. "
        "Wie kann ich dir heute helfen?"
    )
    assert messages_tab_prompts(json.dumps(stored))[0] == "Hallo Camille, wie kann ich helfen?"


def test_the_offer_to_continue_is_in_the_persons_language_when_no_model_wrote_one() -> None:
    bare = Welcome(thread_ts="1712000000.000100", topic="Budget T3", updated=BUDGET_WELCOME.updated)

    greeting = thread_greeting(json.dumps(LEA), bare)

    assert greeting.text == (
        "Bon retour, Léa ! Je garde vos préférences en tête. "
        "Comment puis-je vous aider aujourd'hui ?"
    )
    assert titles(greeting.prompts) == [
        "Reprendre : Budget T3",
        "Que sais-tu de moi ?",
        "Régler mes préférences",
    ]


@pytest.mark.parametrize("language", sorted(GREETING_WORDS))
def test_the_prompts_under_the_greeting_are_in_the_persons_language(language: str) -> None:
    words = GREETING_WORDS[language]
    stored = json.dumps({"name": "Sam", "language": language, "timezone": "Europe/Paris"})

    greeting = thread_greeting(stored, None)
    _, tab_prompts = messages_tab_prompts(stored)

    assert greeting.prompts == words.suggested()
    assert tab_prompts[1] == words.review()
    # Each says something of its own: a click sends the message as the person's words.
    sent = [p["message"] for p in [*greeting.prompts, tab_prompts[1]]]
    assert len(set(sent)) == 4 and all(message.strip() for message in sent)
    if language != "English":
        assert not set(sent) & {p["message"] for p in GREETING_WORDS["English"].suggested()}
