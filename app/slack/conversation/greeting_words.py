"""The words of Orion's greetings in each language it greets in (docs/memory-controls.md); another
language is greeted in English. Only English names the preferences (keys are English words)."""

from __future__ import annotations

from dataclasses import dataclass

# A suggested prompt: its title, and the message a click sends.
Prompt = tuple[str, str]


@dataclass(frozen=True)
class GreetingWords:
    welcome_back: str
    welcome_back_named: str  # {name}
    keeping_preferences: str  # {mentioned}: the preferences mentioned, where listed
    how_can_i_help_today: str
    continue_topic: str  # {topic}: the prompt offering to pick the last topic up again
    tab_title: str  # the Messages tab's title (agent_view)
    tab_title_named: str  # {name}
    # Under the greeting: what Orion remembers, setting a preference, the last conversation.
    prompts: tuple[Prompt, Prompt, Prompt]
    review_preferences: Prompt  # in the Messages tab, for a person with preferences

    def suggested(self) -> list[dict[str, str]]:
        return [_as_slack(prompt) for prompt in self.prompts]

    def review(self) -> dict[str, str]:
        return _as_slack(self.review_preferences)


def _as_slack(prompt: Prompt) -> dict[str, str]:
    title, message = prompt
    return {"title": title, "message": message}


ENGLISH = GreetingWords(
    welcome_back="Welcome back!",
    welcome_back_named="Welcome back, {name}!",
    keeping_preferences="I'll keep your preferences in mind ({mentioned}).",
    how_can_i_help_today="How can I help today?",
    continue_topic="Continue: {topic}",
    tab_title="How can I help?",
    tab_title_named="Hi {name}, how can I help?",
    prompts=(
        ("What do you remember about me?", "What do you remember about me?"),
        ("Set my preferences", "Please remember: I prefer short answers with bullet points."),
        ("Recap our last conversation", "What did we talk about last time?"),
    ),
    review_preferences=("Review my preferences", "Which preferences of mine do you keep in mind?"),
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
        prompts=(
            ("Que sais-tu de moi ?", "Que retiens-tu de moi ?"),
            ("Régler mes préférences", "Retiens : je préfère des réponses courtes en puces."),
            ("Résumer notre dernière conversation", "De quoi avons-nous parlé la dernière fois ?"),
        ),
        review_preferences=(
            "Revoir mes préférences",
            "Quelles préférences gardes-tu en tête pour moi ?",
        ),
    ),
    "Spanish": GreetingWords(
        welcome_back="¡Hola de nuevo!",
        welcome_back_named="¡Hola de nuevo, {name}!",
        keeping_preferences="Tendré en cuenta tus preferencias.",
        how_can_i_help_today="¿En qué puedo ayudarte hoy?",
        continue_topic="Continuar: {topic}",
        tab_title="¿En qué puedo ayudarte?",
        tab_title_named="Hola {name}, ¿en qué puedo ayudarte?",
        prompts=(
            ("¿Qué recuerdas de mí?", "¿Qué recuerdas de mí?"),
            ("Definir mis preferencias", "Recuerda: prefiero respuestas cortas con viñetas."),
            ("Resumir nuestra última conversación", "¿De qué hablamos la última vez?"),
        ),
        review_preferences=("Revisar mis preferencias", "¿Qué preferencias mías tienes en cuenta?"),
    ),
    "Portuguese": GreetingWords(
        welcome_back="Que bom ter você de volta!",
        welcome_back_named="Que bom ter você de volta, {name}!",
        keeping_preferences="Vou levar suas preferências em conta.",
        how_can_i_help_today="Como posso ajudar hoje?",
        continue_topic="Continuar: {topic}",
        tab_title="Como posso ajudar?",
        tab_title_named="Olá {name}, como posso ajudar?",
        prompts=(
            ("O que você lembra de mim?", "O que você lembra de mim?"),
            ("Definir minhas preferências", "Lembre-se: prefiro respostas curtas em tópicos."),
            ("Resumir nossa última conversa", "Sobre o que falamos da última vez?"),
        ),
        review_preferences=(
            "Rever minhas preferências",
            "Quais preferências minhas você leva em conta?",
        ),
    ),
    "Italian": GreetingWords(
        welcome_back="Ciao di nuovo!",
        welcome_back_named="Ciao di nuovo, {name}!",
        keeping_preferences="Terrò a mente le tue preferenze.",
        how_can_i_help_today="Come posso aiutarti oggi?",
        continue_topic="Continua: {topic}",
        tab_title="Come posso aiutarti?",
        tab_title_named="Ciao {name}, come posso aiutarti?",
        prompts=(
            ("Cosa ricordi di me?", "Cosa ricordi di me?"),
            (
                "Imposta le mie preferenze",
                "Ricorda: preferisco risposte brevi con elenchi puntati.",
            ),
            ("Riassumi la nostra ultima conversazione", "Di cosa abbiamo parlato l'ultima volta?"),
        ),
        review_preferences=("Rivedi le mie preferenze", "Quali mie preferenze tieni a mente?"),
    ),
    "German": GreetingWords(
        welcome_back="Willkommen zurück!",
        welcome_back_named="Willkommen zurück, {name}!",
        keeping_preferences="Ich behalte deine Präferenzen im Blick.",
        how_can_i_help_today="Wie kann ich dir heute helfen?",
        continue_topic="Weitermachen: {topic}",
        tab_title="Wie kann ich helfen?",
        tab_title_named="Hallo {name}, wie kann ich helfen?",
        prompts=(
            ("Was weißt du über mich?", "Was weißt du noch über mich?"),
            ("Meine Präferenzen festlegen", "Merk dir: Ich mag kurze Antworten mit Stichpunkten."),
            ("Unser letztes Gespräch zusammenfassen", "Worüber haben wir zuletzt gesprochen?"),
        ),
        review_preferences=(
            "Meine Präferenzen ansehen",
            "Welche meiner Präferenzen behältst du im Blick?",
        ),
    ),
    "Dutch": GreetingWords(
        welcome_back="Welkom terug!",
        welcome_back_named="Welkom terug, {name}!",
        keeping_preferences="Ik houd rekening met je voorkeuren.",
        how_can_i_help_today="Waarmee kan ik je vandaag helpen?",
        continue_topic="Verdergaan: {topic}",
        tab_title="Waarmee kan ik je helpen?",
        tab_title_named="Hoi {name}, waarmee kan ik je helpen?",
        prompts=(
            ("Wat weet je nog van mij?", "Wat weet je nog van mij?"),
            (
                "Mijn voorkeuren instellen",
                "Onthoud: ik heb liever korte antwoorden met opsommingstekens.",
            ),
            ("Ons laatste gesprek samenvatten", "Waar hadden we het de vorige keer over?"),
        ),
        review_preferences=(
            "Mijn voorkeuren bekijken",
            "Met welke voorkeuren van mij houd je rekening?",
        ),
    ),
    "Japanese": GreetingWords(
        welcome_back="おかえりなさい！",
        welcome_back_named="{name}さん、おかえりなさい！",
        keeping_preferences="ご希望は覚えています。",
        how_can_i_help_today="今日は何をお手伝いしましょうか？",
        continue_topic="続ける：{topic}",
        tab_title="何をお手伝いしましょうか？",
        tab_title_named="{name}さん、何をお手伝いしましょうか？",
        prompts=(
            ("私について何を覚えていますか？", "私について何を覚えていますか？"),
            ("好みを設定する", "覚えておいてください：短い箇条書きの回答が好きです。"),
            ("前回の会話をまとめる", "前回は何について話しましたか？"),
        ),
        review_preferences=("好みを確認する", "私のどんな好みを覚えていますか？"),
    ),
    "Chinese": GreetingWords(
        welcome_back="欢迎回来！",
        welcome_back_named="欢迎回来，{name}！",
        keeping_preferences="我会记住你的偏好。",
        how_can_i_help_today="今天需要我帮什么忙？",
        continue_topic="继续：{topic}",
        tab_title="需要我帮什么忙？",
        tab_title_named="{name}，你好！需要我帮什么忙？",
        prompts=(
            ("你记得我什么？", "你记得我的哪些信息？"),
            ("设置我的偏好", "请记住：我喜欢简短的要点式回答。"),
            ("回顾上次的对话", "我们上次聊了什么？"),
        ),
        review_preferences=("查看我的偏好", "你记住了我的哪些偏好？"),
    ),
    "Korean": GreetingWords(
        welcome_back="다시 오셨네요!",
        welcome_back_named="{name}님, 다시 오셨네요!",
        keeping_preferences="말씀하신 선호 사항을 기억하고 있어요.",
        how_can_i_help_today="오늘은 무엇을 도와드릴까요?",
        continue_topic="이어서 하기: {topic}",
        tab_title="무엇을 도와드릴까요?",
        tab_title_named="{name}님, 무엇을 도와드릴까요?",
        prompts=(
            ("저에 대해 무엇을 기억하나요?", "저에 대해 무엇을 기억하나요?"),
            ("선호 사항 설정", "기억해 주세요: 짧은 글머리 기호 답변을 선호해요."),
            ("지난 대화 요약", "지난번에 무슨 이야기를 했죠?"),
        ),
        review_preferences=("선호 사항 보기", "제 선호 사항 중 무엇을 기억하고 있나요?"),
    ),
}


def greeting_words(language: str | None) -> GreetingWords:
    """The words to greet in `language` (a canonical name); English when there are none."""
    return GREETING_WORDS.get(language or "", ENGLISH)
