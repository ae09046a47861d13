"""Names of languages as people write them ("français", "フランス語") mapped to one English name,
so a statement in another language replaces a preference and every reader sees one value."""

from __future__ import annotations

import unicodedata

# canonical name → how it is written in English, French, Spanish, German, Portuguese,
# Italian, Dutch, Japanese, Chinese and Korean (spelling variants included, accents too:
# lookups also try the name with its accents folded).
_NAMES: dict[str, tuple[str, ...]] = {
    "English": (
        "english", "anglais", "inglés", "englisch", "inglês", "inglese", "engels",
        "英語", "英文", "英语", "영어",
    ),
    "French": (
        "french", "français", "francés", "französisch", "francês", "francese", "frans",
        "フランス語", "法語", "法语", "法文", "프랑스어", "불어",
    ),
    "German": (
        "german", "allemand", "alemán", "deutsch", "alemão", "tedesco", "duits",
        "ドイツ語", "德語", "德语", "德文", "독일어",
    ),
    "Spanish": (
        "spanish", "espagnol", "español", "castellano", "spanisch", "espanhol", "spagnolo",
        "spaans", "スペイン語", "西班牙語", "西班牙语", "西班牙文", "스페인어",
    ),
    "Portuguese": (
        "portuguese", "portugais", "portugués", "portugiesisch", "português", "portoghese",
        "portugees", "ポルトガル語", "葡萄牙語", "葡萄牙语", "葡萄牙文", "포르투갈어",
    ),
    "Italian": (
        "italian", "italien", "italiano", "italienisch", "italiaans", "イタリア語",
        "意大利語", "意大利语", "意大利文", "이탈리아어",
    ),
    "Dutch": (
        "dutch", "néerlandais", "neerlandés", "holandés", "niederländisch", "holländisch",
        "holandês", "neerlandês", "olandese", "nederlands", "オランダ語", "荷蘭語", "荷兰语",
        "네덜란드어",
    ),
    "Japanese": (
        "japanese", "japonais", "japonés", "japanisch", "japonês", "giapponese", "japans",
        "日本語", "日语", "日文", "일본어",
    ),
    "Chinese": (
        "chinese", "mandarin", "chinois", "chino", "chinesisch", "chinês", "cinese",
        "chinees", "中国語", "中文", "汉语", "漢語", "普通话", "華語", "华语", "중국어",
    ),
    "Korean": (
        "korean", "coréen", "coreano", "koreanisch", "koreaans", "韓国語", "韩语", "韓語",
        "韩文", "한국어",
    ),
    # Understood by name in English only (and in their own spelling where it is Latin).
    "Swedish": ("swedish", "svenska"),
    "Norwegian": ("norwegian", "norsk"),
    "Danish": ("danish", "dansk"),
    "Finnish": ("finnish", "suomi"),
    "Polish": ("polish", "polski"),
    "Czech": ("czech", "čeština"),
    "Greek": ("greek",),
    "Turkish": ("turkish", "türkçe"),
    "Russian": ("russian", "русский"),
    "Ukrainian": ("ukrainian", "українська"),
    "Arabic": ("arabic",),
    "Hebrew": ("hebrew",),
    "Hindi": ("hindi",),
    "Cantonese": ("cantonese", "廣東話", "粤语", "粵語"),
    "Vietnamese": ("vietnamese", "tiếng việt"),
    "Thai": ("thai",),
    "Indonesian": ("indonesian", "bahasa indonesia"),
}  # fmt: skip


def fold(text: str) -> str:
    """`text` casefolded, without accents ("Français" → "francais"): how names are compared."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if not unicodedata.combining(c))
    )


_CANONICAL: dict[str, str] = {
    fold(name): canonical for canonical, names in _NAMES.items() for name in (canonical, *names)
}
# The longest name, in characters: anything longer is not looked up.
MAX_NAME_CHARS = max(len(name) for name in _CANONICAL)


def canonical_language(name: str) -> str | None:
    """The canonical name of the language `name` names ("Französisch" → "French"), or None
    when it names none Orion knows."""
    name = name.strip()
    if not name or len(name) > MAX_NAME_CHARS:
        return None
    return _CANONICAL.get(fold(name))
