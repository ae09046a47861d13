"""40,000-character messages (Slack's limit) shaped against the patterns of preference
detection in every language: forms opened and never closed, runs of one script, CJK
punctuation that breaks a sentence with no space, fillers repeated. Used by
tests/security/test_preference_languages.py and measured by bench/preference_languages.py.
"""

from __future__ import annotations

SLACK_LIMIT = 40_000


def filled(unit: str, length: int = SLACK_LIMIT) -> str:
    return (unit * (length // len(unit) + 1))[:length]


def opened(opening: str, unit: str, closing: str = "") -> str:
    """`opening`, `unit` repeated, then `closing`: SLACK_LIMIT characters in all."""
    return opening + filled(unit, SLACK_LIMIT - len(opening) - len(closing)) + closing


PREFERENCE_SHAPES: dict[str, str] = {
    "叫我 + one ideograph": opened("叫我", "小"),
    "我在 + ideographs + 团队": opened("我在", "数", "团队"),
    "いつも + kana, never closed": opened("いつも", "あ"),
    "kana + ないでください": opened("", "あ", "ないでください"),
    "私のことは + kana + と呼んで": opened("私のことは", "あ", "と呼んで"),
    "の方が repeated": filled("の方が"),
    "절대 + Hangul, spaced": opened("절대 ", "가 "),
    "Hangul + 라고 불러 주세요": opened("", "가", "라고 불러 주세요"),
    "앞으로 + Hangul + 지 마세요": opened("앞으로 ", "가 ", "지 마세요"),
    "Nenn mich + x-": opened("Nenn mich ", "x-"),
    "Du kannst mich + words + nennen": opened("Du kannst mich ", "a ", "nennen"),
    "Utilise toujours + one word": opened("Utilise toujours ", "a"),
    "Usa sempre + words": opened("Usa sempre ", "il "),
    "Me chame de + words": opened("Me chame de ", "de "),
    "。！？ repeated": filled("。！？"),
    "¿ repeated": filled("¿"),
    "？ repeated": filled("？"),
    "，、 repeated": filled("，、"),
    "mixed scripts": filled("a字가あ。 "),
    "s'il te plaît fillers": "Appelle-moi Sam" + filled(", s'il te plaît", SLACK_LIMIT - 15),
    "bitte fillers": "Nenn mich Sam" + filled(" bitte", SLACK_LIMIT - 13),
    "よろしく fillers": "サムと呼んで" + filled("、よろしく", SLACK_LIMIT - 6),
    "openers repeated": filled("désormais, "),
    "以后 repeated": filled("以后"),
    "99-character sentences": filled("いつも" + "あ" * 95 + "。"),
    "sentence after sentence, Chinese": filled("叫我小明。"),
    "sentence after sentence, German": filled("Nenn mich Cami. "),
}
