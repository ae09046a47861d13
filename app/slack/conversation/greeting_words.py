"""The words of Orion's own greetings, in each language it greets in.

A person Orion knows is greeted in their language (app/learning/preferences.py's
`spoken_language`: the language they asked for, else the one they last stated a
preference in), with their name. English is the default; a language without an entry
here is greeted in English. Only English lists the preferences it mentions: elsewhere the
keys ("response_style") would be English words in the middle of the sentence.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GreetingWords:
    welcome_back: str
    welcome_back_named: str  # {name}
    keeping_preferences: str  # {mentioned}: the preferences mentioned, where listed
    how_can_i_help_today: str
    continue_topic: str  # {topic}: the prompt offering to pick the last topic up again
    tab_title: str  # the Messages tab's title (agent_view)
    tab_title_named: str  # {name}


ENGLISH = GreetingWords(
    welcome_back="Welcome back!",
    welcome_back_named="Welcome back, {name}!",
    keeping_preferences="I'll keep your preferences in mind ({mentioned}).",
    how_can_i_help_today="How can I help today?",
    continue_topic="Continue: {topic}",
    tab_title="How can I help?",
    tab_title_named="Hi {name}, how can I help?",
)

GREETING_WORDS: dict[str, GreetingWords] = {
    "English": ENGLISH,
    "French": GreetingWords(
        welcome_back="Bon retour !",
        welcome_back_named="Bon retour, {name} !",
        keeping_preferences="Je garde vos préférences en tête.",
        how_can_i_help_today="Comment puis-je vous aider aujourd'hui ?",
        continue_topic="Reprendre : {topic}",
        tab_title="Comment puis-je vous aider ?",
        tab_title_named="Bonjour {name}, comment puis-je vous aider ?",
    ),
    "Spanish": GreetingWords(
        welcome_back="¡Hola de nuevo!",
        welcome_back_named="¡Hola de nuevo, {name}!",
        keeping_preferences="Tendré en cuenta tus preferencias.",
        how_can_i_help_today="¿En qué puedo ayudarte hoy?",
        continue_topic="Continuar: {topic}",
        tab_title="¿En qué puedo ayudarte?",
        tab_title_named="Hola {name}, ¿en qué puedo ayudarte?",
    ),
    "Portuguese": GreetingWords(
        welcome_back="Que bom ter você de volta!",
        welcome_back_named="Que bom ter você de volta, {name}!",
        keeping_preferences="Vou levar suas preferências em conta.",
        how_can_i_help_today="Como posso ajudar hoje?",
        continue_topic="Continuar: {topic}",
        tab_title="Como posso ajudar?",
        tab_title_named="Olá {name}, como posso ajudar?",
    ),
    "Italian": GreetingWords(
        welcome_back="Ciao di nuovo!",
        welcome_back_named="Ciao di nuovo, {name}!",
        keeping_preferences="Terrò a mente le tue preferenze.",
        how_can_i_help_today="Come posso aiutarti oggi?",
        continue_topic="Continua: {topic}",
        tab_title="Come posso aiutarti?",
        tab_title_named="Ciao {name}, come posso aiutarti?",
    ),
    "German": GreetingWords(
        welcome_back="Willkommen zurück!",
        welcome_back_named="Willkommen zurück, {name}!",
        keeping_preferences="Ich behalte deine Präferenzen im Blick.",
        how_can_i_help_today="Wie kann ich dir heute helfen?",
        continue_topic="Weitermachen: {topic}",
        tab_title="Wie kann ich helfen?",
        tab_title_named="Hallo {name}, wie kann ich helfen?",
    ),
    "Dutch": GreetingWords(
        welcome_back="Welkom terug!",
        welcome_back_named="Welkom terug, {name}!",
        keeping_preferences="Ik houd rekening met je voorkeuren.",
        how_can_i_help_today="Waarmee kan ik je vandaag helpen?",
        continue_topic="Verdergaan: {topic}",
        tab_title="Waarmee kan ik je helpen?",
        tab_title_named="Hoi {name}, waarmee kan ik je helpen?",
    ),
    "Japanese": GreetingWords(
        welcome_back="おかえりなさい！",
        welcome_back_named="{name}さん、おかえりなさい！",
        keeping_preferences="ご希望は覚えています。",
        how_can_i_help_today="今日は何をお手伝いしましょうか？",
        continue_topic="続ける：{topic}",
        tab_title="何をお手伝いしましょうか？",
        tab_title_named="{name}さん、何をお手伝いしましょうか？",
    ),
    "Chinese": GreetingWords(
        welcome_back="欢迎回来！",
        welcome_back_named="欢迎回来，{name}！",
        keeping_preferences="我会记住你的偏好。",
        how_can_i_help_today="今天需要我帮什么忙？",
        continue_topic="继续：{topic}",
        tab_title="需要我帮什么忙？",
        tab_title_named="{name}，你好！需要我帮什么忙？",
    ),
    "Korean": GreetingWords(
        welcome_back="다시 오셨네요!",
        welcome_back_named="{name}님, 다시 오셨네요!",
        keeping_preferences="말씀하신 선호 사항을 기억하고 있어요.",
        how_can_i_help_today="오늘은 무엇을 도와드릴까요?",
        continue_topic="이어서 하기: {topic}",
        tab_title="무엇을 도와드릴까요?",
        tab_title_named="{name}님, 무엇을 도와드릴까요?",
    ),
}


def greeting_words(language: str | None) -> GreetingWords:
    """The words to greet in `language` (a canonical name); English when there are none."""
    return GREETING_WORDS.get(language or "", ENGLISH)
