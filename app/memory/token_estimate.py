"""Tokens as Claude counts them, estimated offline (no network call on the person's path), every
weight erring high (docs/claude-settings.md, "Tokens for budgets")."""

from __future__ import annotations

# Tokens per character, by the length of the character's UTF-8 encoding.
ASCII_TOKENS = 1 / 3
TWO_BYTE_TOKENS = 1 / 2
THREE_BYTE_TOKENS = 1.2
FOUR_BYTE_TOKENS = 2.0


def estimate_tokens(text: str) -> int:
    """About how many tokens Claude counts for `text` (rounded up). The characters of each
    encoded length are counted from three encodings' lengths, all in C and linear: a 40,000
    character message costs well under a millisecond, whatever its characters."""
    chars = len(text)
    ascii_chars = len(text.encode("ascii", "ignore"))
    utf8_bytes = len(text.encode("utf-8", "surrogatepass"))
    # Characters beyond the Basic Multilingual Plane: two UTF-16 code units each.
    four_byte = len(text.encode("utf-16-le", "surrogatepass")) // 2 - chars
    two_or_three = chars - ascii_chars - four_byte
    three_byte = utf8_bytes - ascii_chars - 4 * four_byte - 2 * two_or_three
    two_byte = two_or_three - three_byte
    weight = (
        ascii_chars * ASCII_TOKENS
        + two_byte * TWO_BYTE_TOKENS
        + three_byte * THREE_BYTE_TOKENS
        + four_byte * FOUR_BYTE_TOKENS
    )
    return -int(-weight // 1)


def clip_to_tokens(text: str, budget: int) -> str:
    """The longest start of `text` whose estimate fits `budget` tokens."""
    if estimate_tokens(text) <= budget:
        return text
    # Every character weighs at most FOUR_BYTE_TOKENS and at least ASCII_TOKENS: search
    # between the cuts those bounds give, on the estimate itself.
    low = min(len(text), int(budget / FOUR_BYTE_TOKENS))
    high = min(len(text), int(budget / ASCII_TOKENS) + 1)
    while low < high:
        middle = (low + high + 1) // 2
        if estimate_tokens(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return text[:low]
