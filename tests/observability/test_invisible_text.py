"""Text without its invisible characters, mapped back to the original."""

from __future__ import annotations

import sys
import unicodedata

from app.observability.invisible_text import INVISIBLE, VisibleText


def test_every_format_character_of_this_python_is_invisible() -> None:
    # The class is written out (computing it at import would cost every process a scan
    # of all of Unicode): a newer Unicode database with new format characters fails here.
    missing = [
        f"U+{code:04X}"
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) == "Cf" and not INVISIBLE.match(chr(code))
    ]
    assert missing == []


def test_printable_characters_are_kept() -> None:
    text = "Café ☕ naïve 🙂 日本語 עברית العربية a-b_c.d"
    visible = VisibleText.of(text)
    assert visible.text is text
    assert visible.original_span(2, 6) == (2, 6)


def test_a_span_of_the_visible_text_maps_to_the_original_with_its_invisible_characters() -> None:
    original = "ab\u200bcd\u2060\u2060ef\ufeff"
    visible = VisibleText.of(original)
    assert visible.text == "abcdef"
    assert visible.original_span(0, 6) == (0, 9)  # from `a` to `f`, not the BOM after it
    start, end = visible.original_span(1, 4)  # "bcd"
    assert original[start:end] == "b\u200bcd"
    start, end = visible.original_span(4, 5)  # "e"
    assert original[start:end] == "e"


def test_text_of_nothing_but_invisible_characters_is_empty() -> None:
    assert VisibleText.of("\u200b\u200c\u200d").text == ""


def test_slacks_entities_are_seen_as_their_characters_and_map_back_whole() -> None:
    original = "pw p&amp;s\u200bs&lt;w&gt; &amp;lt; end"
    visible = VisibleText.of(original)
    assert visible.text == "pw p&ss<w> &lt; end"
    start, end = visible.original_span(3, 10)  # "p&ss<w>"
    assert original[start:end] == "p&amp;s\u200bs&lt;w&gt;"
    start, end = visible.original_span(11, 15)  # "&lt;", as typed
    assert original[start:end] == "&amp;lt;"


def test_a_lone_ampersand_changes_nothing() -> None:
    text = "Q&A: fish & chips, a&b"
    assert VisibleText.of(text).text is text
