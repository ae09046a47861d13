"""The words `recall` matches on, in any language: one definition for what is indexed and
what is asked.

Text is normalised first — NFKC (full-width letters and ligatures become plain ones),
casefold (`Straße` finds `strasse`, final sigma finds sigma) and accents folded (`réunion`
finds `reunion`, `ё` finds `е`): the combining marks of the Latin, Greek and Cyrillic
alphabets (U+0300–U+036F) are dropped after decomposition and the rest is composed again,
so Devanagari vowel signs, Thai marks and Hangul syllables stay whole.

Alphabetic scripts (Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari and the other Indic
scripts…) are cut into words. Chinese, Japanese, Korean, Thai, Lao, Khmer and Myanmar
write words without spaces (or, in Korean, glue particles onto them): they are cut into
overlapping character pairs (bigrams), so `予算` is found inside `予算会議について`
without a dictionary. Every bound here keeps a 40,000-character input linear: regular
expressions without nested repetition, terms cut to `MAX_TERM_CHARS`, and at most
`limit` distinct terms kept.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Iterator

# Longer "words" are cut: German compounds fit, a hostile 40,000-letter run costs one term.
MAX_TERM_CHARS = 32
# A question names a topic in a few words; a long query would only multiply the lookups.
MAX_QUERY_TERMS = 32

_ACCENTS = re.compile("[\u0300-\u036f]+")
# Scripts written without spaces between words (or with particles glued on, Korean):
# Thai, Lao, Myanmar, Hangul Jamo, Khmer, kana, Hangul compatibility Jamo, katakana
# extensions, CJK ideographs (extension A, the main block, compatibility), Hangul
# syllables, and the ideographs beyond the Basic Multilingual Plane.
_UNSPACED_CHARS = (
    "\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff\u3130-\u318f"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003134f"
)
# A run of letters, digits and the combining marks words are spelt with (`\w` leaves out
# the vowel signs of Indic scripts and the marks of Hebrew and Arabic, which would cut
# words in two). The underscore is not part of words.
_WORD_RUN = re.compile(
    "(?:[^\\W_]|[\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
    f"\u0900-\u0dff\u3099\u309a{_UNSPACED_CHARS}])+"
)
_UNSPACED_RUN = re.compile(f"([{_UNSPACED_CHARS}]+)")
# The Arabic article (with "and", "with", "for" before it), glued to the noun it defines.
_ARABIC_ARTICLE = re.compile("^(?:وال|بال|فال|كال|لل|ال)(?=...)")
_ARABIC_LETTERS = re.compile("[\u0600-\u06ff]")

# Words that ask to search rather than name what to search for, in the languages people
# most often ask in. Only queries drop them: a summary keeps every word it has.
_QUERY_FILLER_TEXT = """
    a about again ago all an and any anything are as at be been before but by can could
    conversation conversations did discuss discussed discussing discussion do does earlier
    for from had has have how i in into is it its last me month my of on or our past
    previous recall remember said say session sessions should something talk talked
    talking tell that the there this those time to today us was we week were what when
    where which who why with would year yesterday you your
    au aux avec ce de des du en et la le les nous on ou parle parlé quoi qu que sur un une
    avons discute discuté était
    das dem den der des die ein eine einen haben hatten mit über uber uns was wir worüber
    woruber besprochen gesprochen
    al con de del el en habíamos hablamos la las los lo que qué sobre un una
    nosotros hablado
    и в во на о об обо что мы мы про с со как когда говорили обсуждали
    και για το τη την τι το του των με σε συζητησαμε
"""


# The same, in the scripts written without spaces: cut out of a question's runs before
# they are cut into pairs, so that "what did we decide about" leaves room for the topic.
_UNSPACED_FILLER_TEXT = """
    について 何を 何が 話しましたか 話しました 話した 決めましたか 決めました 決めた ましたか
    でしたか ですか 私たち
    我们 关于 什么 讨论 决定 了吗 的是
    우리 대해 무엇을 무슨 이야기 결정했나요 했나요 했었나요
    เรา ตัดสินใจ อะไร เรื่อง คุย กัน ได้ ไว้ บ้าง
"""


def normalise(text: str) -> str:
    """NFKC, casefolded, accents of Latin, Greek and Cyrillic letters dropped."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii():
        return folded
    bare = _ACCENTS.sub("", unicodedata.normalize("NFD", folded))
    return unicodedata.normalize("NFC", bare)


_QUERY_FILLER = frozenset(normalise(word) for word in _QUERY_FILLER_TEXT.split())
# Longest first: a phrase is cut whole before a shorter one inside it.
_UNSPACED_FILLER = re.compile(
    "|".join(
        re.escape(normalise(phrase))
        for phrase in sorted(_UNSPACED_FILLER_TEXT.split(), key=len, reverse=True)
    )
)


def _terms(text: str, *, question: bool = False) -> Iterator[str]:
    """Every term of `text`, in order, repeats included (`question`: without the phrases
    that only ask, in scripts written without spaces)."""
    for run in _WORD_RUN.findall(normalise(text)):
        if run.isascii():
            if len(run) >= 2:
                yield run[:MAX_TERM_CHARS]
            continue
        for piece in _UNSPACED_RUN.split(run):
            if not piece:
                continue
            if _UNSPACED_RUN.fullmatch(piece):
                if not question:
                    yield from _bigrams(piece)
                    continue
                parts = _UNSPACED_FILLER.split(piece)
                for part in parts:
                    if len(part) == 1 and len(parts) > 1:
                        continue  # a particle left beside a cut phrase (か, を, 를)
                    yield from _bigrams(part, every_other=True)
            elif len(piece) >= 2:
                yield _word(piece)


def _bigrams(piece: str, *, every_other: bool = False) -> Iterator[str]:
    """The overlapping pairs of `piece` (a document holds them all); `every_other`: pairs
    that cover each character once (a question: a document holding the same text holds
    them too, and each pair looked up is one scan of the index)."""
    if not piece:
        return
    if len(piece) == 1:
        yield piece  # a one-character word (猫): itself
        return
    last = len(piece) - 2
    for start in range(0, last + 1, 2 if every_other else 1):
        yield piece[start : start + 2]
    if every_other and last % 2:
        yield piece[last:]


def _word(piece: str) -> str:
    if _ARABIC_LETTERS.match(piece):
        piece = _ARABIC_ARTICLE.sub("", piece)
    return piece[:MAX_TERM_CHARS]


def document_terms(title: str, body: str, *, limit: int) -> list[str]:
    """A conversation's terms, each once, title first then in order of appearance, at most
    `limit` of them."""
    seen: dict[str, None] = {}
    for text in (title, body):
        for term in _terms(text):
            if term not in seen:
                seen[term] = None
                if len(seen) == limit:
                    return list(seen)
    return list(seen)


def title_terms(title: str) -> set[str]:
    return set(_terms(title))


def query_terms(query: str) -> list[str]:
    """The terms worth looking up for a question, each once, in order, without the words
    that only ask to search ("what did we talk about?" names nothing: no terms)."""
    asked = _terms(query, question=True)
    named = (term for term in dict.fromkeys(asked) if term not in _QUERY_FILLER)
    return list(itertools.islice(named, MAX_QUERY_TERMS))


def is_bigram(term: str) -> bool:
    """A term cut from a script written without spaces (matched whole, never by its
    beginning)."""
    return _UNSPACED_RUN.match(term) is not None


def stem(term: str) -> str:
    """The beginning a query word is matched by, so that inflected forms find each other
    (`budgets`/`budget`, `бюджете`/`бюджета`): long words lose their last two letters.
    Bigrams and short words are matched whole."""
    if len(term) >= 6 and not is_bigram(term):
        return term[:-2]
    return term
