"""The words `recall` matches on, in any language: one definition for what is indexed and what
is asked. Text is normalised (NFKC, casefold, Latin, Greek and Cyrillic accents folded); words
of alphabetic scripts are reduced to their language's Snowball stem, scripts without spaces cut
into overlapping character pairs; a question's Latin words are looked up by their stem in every
language (docs/architecture.md, "Recall", terms in any language)."""

from __future__ import annotations

import itertools
import re
import string
import threading
import unicodedata
from collections.abc import Iterable, Iterator

import Stemmer

# Longer "words" are cut: German compounds fit, a hostile 40,000-letter run costs one term.
MAX_TERM_CHARS = 32
# A question names a topic in a few words; a long query would only multiply the lookups.
MAX_QUERY_TERMS = 32

_ACCENTS = re.compile("[\u0300-\u036f]+")
# Scripts written without spaces between words (or with particles glued on, Korean): Thai,
# Lao, Myanmar, Khmer, kana, Hangul and the CJK ideographs, in each of their blocks.
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
# A number written against the character it counts ("5月", "3日", "1000円"): a term of its
# own, the number being no character of the run (a date is asked for by it: "5月の出張");
# not the end of a longer number or word ("15日" holds no "5日").
_NUMBER_LEAD = string.ascii_lowercase + string.digits
_NUMBER_OF = re.compile(f"(?<![{_NUMBER_LEAD}])[0-9]+[{_UNSPACED_CHARS}]")
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


# The common words of the languages whose Latin-alphabet texts are stemmed, by language:
# they say which language a text is in, and are not worth indexing.
_COMMON_WORDS_TEXT = {
    "english": "the and of to is that with for it was you my we this are have be not on at",
    "french": "le la les et est de des une pour que avec pas je nous dans du au ce il elle sont",
    "german": "der die das und ist nicht mit ich wir ein eine für auf zu den dem im sie es sind",
    "spanish": "el la los las y es que de con para una por mi nos del se lo no en está son",
    "portuguese": "o os as e é que de com para uma não do da em nós meu se um na no são",
    "italian": "il la le e è che di con per una non del della mi sono ho un gli si ci nel",
    "dutch": "de het een en is van niet met ik we voor op dat zijn ze er maar ook hij",
}
_COMMON_WORDS = {
    language: frozenset(normalise(word) for word in words.split())
    for language, words in _COMMON_WORDS_TEXT.items()
}
LATIN_LANGUAGES = tuple(_COMMON_WORDS)
# Not indexed, not asked: the words that only ask, and every language's common words.
_QUERY_FILLER = frozenset(normalise(word) for word in _QUERY_FILLER_TEXT.split()).union(
    *_COMMON_WORDS.values()
)
# Scripts with one Snowball stemmer (a word's first letter decides); Hebrew, the other
# Indic scripts and digits are matched as they are.
_SCRIPT_STEMMERS = (
    (re.compile("[\u0400-\u04ff]"), "russian"),
    (re.compile("[\u0370-\u03ff\u1f00-\u1fff]"), "greek"),
    (_ARABIC_LETTERS, "arabic"),
    (re.compile("[\u0900-\u097f]"), "hindi"),
)
_LATIN_LETTER = re.compile("[a-z\u00c0-\u024f]")
# How many of a text's first words its language is guessed from.
_LANGUAGE_SAMPLE_WORDS = 200
# Longest first: a phrase is cut whole before a shorter one inside it.
_UNSPACED_FILLER = re.compile(
    "|".join(
        re.escape(normalise(phrase))
        for phrase in sorted(_UNSPACED_FILLER_TEXT.split(), key=len, reverse=True)
    )
)


class _Stemmers(threading.local):
    """One stemmer per language and thread: a PyStemmer object is not to be shared
    between threads (searches and turn ends run in worker threads)."""

    def __init__(self) -> None:
        self.by_language: dict[str, Stemmer.Stemmer] = {}

    def stem(self, language: str, words: list[str]) -> list[str]:
        stemmer = self.by_language.get(language)
        if stemmer is None:
            stemmer = self.by_language[language] = Stemmer.Stemmer(language)
        stems: list[str] = stemmer.stemWords(words)
        return stems


_stemmers = _Stemmers()


def _pieces(text: str, *, question: bool = False) -> Iterator[tuple[str, bool]]:
    """Every word and character pair of `text`, in order, repeats included, each with
    whether it is a word (to stem) rather than a pair (`question`: without the phrases
    that only ask, in scripts written without spaces)."""
    for run in _WORD_RUN.findall(normalise(text)):
        if run.isascii():
            if len(run) >= 2:
                yield run[:MAX_TERM_CHARS], True
            continue
        yield from ((number[-MAX_TERM_CHARS:], False) for number in _NUMBER_OF.findall(run))
        for piece in _UNSPACED_RUN.split(run):
            if not piece:
                continue
            if _UNSPACED_RUN.fullmatch(piece):
                if not question:
                    yield from ((pair, False) for pair in _bigrams(piece))
                    continue
                parts = _UNSPACED_FILLER.split(piece)
                for part in parts:
                    if len(part) == 1 and len(parts) > 1:
                        continue  # a particle left beside a cut phrase (か, を, 를)
                    yield from ((pair, False) for pair in _bigrams(part, every_other=True))
            elif len(piece) >= 2:
                yield _word(piece), True


def _bigrams(piece: str, *, every_other: bool = False) -> Iterator[str]:
    """The overlapping pairs of `piece` (a document holds them all); `every_other`: pairs
    that cover each character once (a question: a document holding the same text holds
    them too, and each pair looked up is one more lookup)."""
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


def _script_language(word: str) -> str | None:
    """The stemmer a word of a non-Latin script takes; "latin" for the Latin alphabet;
    None for a word matched as it is (digits, Hebrew…)."""
    if _LATIN_LETTER.match(word):
        return "latin"
    for letters, language in _SCRIPT_STEMMERS:
        if letters.match(word):
            return language
    return None


def latin_language(words: Iterable[str]) -> str:
    """The language of a text in the Latin alphabet, by its common words (its first
    `_LANGUAGE_SAMPLE_WORDS`); English when none says."""
    counts = dict.fromkeys(LATIN_LANGUAGES, 0)
    for word in itertools.islice(words, _LANGUAGE_SAMPLE_WORDS):
        for language, common in _COMMON_WORDS.items():
            if word in common:
                counts[language] += 1
    return max(counts, key=lambda language: counts[language])


def _stemmed(pieces: list[tuple[str, bool]], latin: str) -> list[str]:
    """The terms of `pieces`, in order, common words left out: words by their stem (Latin
    words in the language `latin`), pairs as they are. One call per stemmer."""
    terms = [
        piece if not is_word or piece not in _QUERY_FILLER else "" for piece, is_word in pieces
    ]
    by_language: dict[str, list[int]] = {}
    for at, (piece, is_word) in enumerate(pieces):
        if is_word and terms[at]:
            language = _script_language(piece)
            if language is not None:
                by_language.setdefault(latin if language == "latin" else language, []).append(at)
    for language, places in by_language.items():
        stems = _stemmers.stem(language, [terms[at] for at in places])
        for at, stem in zip(places, stems, strict=True):
            terms[at] = stem[:MAX_TERM_CHARS]
    return [term for term in terms if term]


def text_terms(text: str) -> list[str]:
    """The terms of one text (a message, a summary), in order, repeats included."""
    pieces = list(_pieces(text))
    words = (piece for piece, is_word in pieces if is_word and _LATIN_LETTER.match(piece))
    return _stemmed(pieces, latin_language(words))


def document_terms(texts: Iterable[tuple[str, int]], *, limit: int) -> dict[str, int]:
    """A conversation's terms and how often each occurs, from its texts, each with its
    weight (a title's words count more), in order of first appearance: at most `limit`
    distinct terms (later new ones are left out)."""
    counts: dict[str, int] = {}
    for text, weight in texts:
        for term in text_terms(text):
            if term in counts:
                counts[term] += weight
            elif len(counts) < limit:
                counts[term] = weight
    return counts


def query_terms(query: str) -> list[tuple[str, ...]]:
    """The terms worth looking up for a question, each once, in order, without the words
    that only ask to search ("what did we talk about?" names nothing: no terms). Each is
    given with its variants: a Latin word's stems in each language (the question's
    language says nothing of the conversation's); any of them is a match."""
    pieces = [
        (piece, is_word)
        for piece, is_word in dict.fromkeys(_pieces(query, question=True))
        if not is_word or piece not in _QUERY_FILLER
    ][:MAX_QUERY_TERMS]
    latin = [piece for piece, is_word in pieces if is_word and _LATIN_LETTER.match(piece)]
    stems = {language: _stemmers.stem(language, latin) for language in LATIN_LANGUAGES}
    variants: dict[str, tuple[str, ...]] = {
        word: tuple(dict.fromkeys(stems[language][at][:MAX_TERM_CHARS] for language in stems))
        for at, word in enumerate(latin)
    }
    groups: list[tuple[str, ...]] = []
    for piece, is_word in pieces:
        if piece in variants:
            group = variants[piece]
        else:
            group = tuple(_stemmed([(piece, is_word)], "english")) if is_word else (piece,)
        if group and group not in groups:
            groups.append(group)
    return groups


def continues_number(char: str) -> bool:
    """Whether a number term found after `char` would be the end of a longer number or word
    (which the index does not hold it for)."""
    return char in _NUMBER_LEAD


def is_bigram(term: str) -> bool:
    """A term cut from a script written without spaces (a pair, or a number and what it
    counts): found anywhere in a word, not only at its start."""
    return _UNSPACED_RUN.search(term) is not None
