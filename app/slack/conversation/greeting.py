"""What Orion says when a thread opens, and the prompts it suggests."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from app.learning.opening import Opening
from app.learning.plain_text import one_line
from app.learning.preferences import MAX_VALUE_CHARS, spoken_language
from app.learning.welcome import Welcome, welcome_of
from app.memory.loader import Scope
from app.memory.preferences_file import read_preferences
from app.slack.conversation.greeting_words import ENGLISH, GreetingWords, greeting_words
from app.slack.mrkdwn import escape, without_direction_controls

GENERIC_GREETING = (
    "Hi, I'm Orion. I remember what matters to you across conversations, "
    "so you don't have to repeat yourself. How can I help?"
)

SUGGESTED_PROMPTS = ENGLISH.suggested()

# Preference keys that name the person rather than describe a preference.
_NAME_KEYS = ("name", "preferred_name", "call_me")
MAX_PREFERENCES_MENTIONED = 2


@dataclass(frozen=True)
class Greeting:
    words: str  # as said (`orion chat` prints them as they are)
    prompts: list[dict[str, str]]

    @property
    def text(self) -> str:
        """The words as a Slack message (see `thread_greeting`)."""
        return escape(self.words)


def greeting_of(opening: Opening | None, retention_days: int) -> Greeting:
    """What a thread opens with, from the person's state at its start (None: memory is
    off, or could not be read): the same in Slack and `orion chat`."""
    if opening is None:
        return Greeting(GENERIC_GREETING, SUGGESTED_PROMPTS)
    welcome = welcome_of(opening.profile)
    if welcome is not None and not welcome.fresh(datetime.now(UTC), retention_days):
        welcome = None
    return thread_greeting(opening.loaded.content(Scope.USER), welcome)


def thread_greeting(preferences_json: str | None, welcome: Welcome | None) -> Greeting:
    """What a thread opens with: a known person welcomed back (to a `welcome` within retention) or
    with their preferences, a first-timer the plain welcome; stored words escaped, shown as
    written."""
    words = welcome.greeting if welcome and welcome.greeting else greeting_for(preferences_json)
    language = _known(preferences_json)[1]
    if welcome is None:
        return Greeting(words, language.suggested())
    follow_up = welcome.next_step or language.continue_topic.format(topic=welcome.topic)
    return Greeting(words, [{"title": follow_up, "message": follow_up}, *language.suggested()[:2]])


def greeting_for(preferences_json: str | None) -> str:
    """A welcome back, by name, in the person's language (greeting_words.py), that
    mentions one or two stored preferences; generic otherwise."""
    preferences, words = _known(preferences_json)
    if not preferences:
        return GENERIC_GREETING
    name = next((str(preferences.pop(k)) for k in _NAME_KEYS if k in preferences), None)
    opening = words.welcome_back_named.format(name=name) if name else words.welcome_back
    mentioned = [
        f"{key.replace('_', ' ')}: {value}"
        for key, value in list(preferences.items())[:MAX_PREFERENCES_MENTIONED]
    ]
    if not mentioned:
        return f"{opening} {words.how_can_i_help_today}"
    keeping = words.keeping_preferences.format(mentioned="; ".join(mentioned))
    return f"{opening} {keeping} {words.how_can_i_help_today}"


def messages_tab_prompts(preferences_json: str | None) -> tuple[str, list[dict[str, str]]]:
    """The title and prompts at the top of the Messages tab (agent_view): by name, and
    with the person's own preferences to review, when Orion knows them."""
    preferences, words = _known(preferences_json)
    name = next((str(preferences.pop(k)) for k in _NAME_KEYS if k in preferences), None)
    title = words.tab_title_named.format(name=name) if name else words.tab_title
    title = without_direction_controls(title)
    prompts = words.suggested()
    if not preferences:
        return title, prompts
    return title, [prompts[0], words.review(), prompts[2]]


def _known(preferences_json: str | None) -> tuple[dict[str, str], GreetingWords]:
    """The person's preferences, and the words to greet them in: their language's when
    Orion knows one (the file is read again for it only when it holds preferences)."""
    preferences = _preferences(preferences_json)
    if not preferences:
        return preferences, ENGLISH
    return preferences, greeting_words(spoken_language(preferences_json))


def _preferences(preferences_json: str | None) -> dict[str, str]:
    """The person's preferences, each flattened and clipped as detection keeps them: the
    file is also written by Claude's memory tool, and a greeting is one short line."""
    return {
        key: one_line(value, MAX_VALUE_CHARS)
        for key, value in read_preferences(preferences_json).items()
    }
