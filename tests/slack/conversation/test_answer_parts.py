"""Cutting a long answer into Slack messages: within the limit, between Markdown blocks,
code blocks closed and reopened only when one is longer than a message."""

from __future__ import annotations

import random
import re

from markdown_it import MarkdownIt

from app.slack.conversation.answer_parts import rest_of, split_markdown

FENCE_LINE = re.compile(r"^```\w*\n", re.MULTILINE)
MARKDOWN = MarkdownIt("commonmark")


def _open_fence(markdown: str) -> bool:
    """Whether `markdown` ends inside a code block (an unclosed fence runs to the end)."""
    lines = markdown.splitlines(keepends=True)
    for token in MARKDOWN.parse(markdown):
        if token.type == "fence":
            first, last = token.map
            closed = last - first >= 2 and lines[last - 1].strip().startswith(token.markup)
            if not closed:
                return True
    return False


def _without_fence_lines(markdown: str) -> str:
    return FENCE_LINE.sub("", markdown)


def test_an_answer_that_fits_is_one_message_unchanged() -> None:
    assert split_markdown("Short answer.\n\n```\ncode\n```", 100) == [
        "Short answer.\n\n```\ncode\n```"
    ]


def test_messages_are_cut_between_blocks_not_inside_them() -> None:
    paragraph = "word " * 15 + "\n\n"  # 77 characters
    code = "```sql\nselect 1;\nselect 2;\n```\n\n"
    text = paragraph + code + paragraph + code + paragraph

    parts = split_markdown(text, 120)

    assert "".join(parts) == text
    assert all(len(p) <= 120 for p in parts)
    block_starts = {0, 77, 77 + len(code), 154 + len(code), 154 + 2 * len(code)}
    cuts = [len("".join(parts[:n])) for n in range(1, len(parts))]
    assert cuts and set(cuts) <= block_starts, "each cut falls between two blocks"


def test_a_code_block_longer_than_a_message_is_closed_and_reopened_with_its_language() -> None:
    body = "".join(f"print({n})\n" for n in range(100))  # 1,190 characters
    text = "Here:\n\n```python\n" + body + "```\n\nDone."

    parts = split_markdown(text, 400)

    assert len(parts) > 3 and all(len(p) <= 400 for p in parts)
    assert not any(_open_fence(p) for p in parts), "every message's code is closed"
    assert all(p.startswith("```python\n") for p in parts[2:-1]), "reopened with its language"
    assert _without_fence_lines("".join(parts)) == _without_fence_lines(text)


def test_a_line_longer_than_a_message_is_cut_at_a_space() -> None:
    line = " ".join(f"w{n}" for n in range(300))  # one 1,389-character paragraph
    parts = split_markdown(line, 500)
    assert "".join(parts) == line
    assert all(len(p) <= 500 and (p.endswith(" ") or p is parts[-1]) for p in parts)


def test_random_answers_keep_every_character_within_the_limit() -> None:
    rng = random.Random(7)
    for _ in range(60):
        blocks = []
        for _ in range(rng.randint(1, 25)):
            kind = rng.random()
            if kind < 0.4:
                blocks.append(
                    " ".join("w" * rng.randint(1, 12) for _ in range(rng.randint(1, 300)))
                )
            elif kind < 0.7:
                lines = "".join(
                    f"x = {'y' * rng.randint(1, 90)}\n" for _ in range(rng.randint(1, 300))
                )
                blocks.append(f"```{rng.choice(['', 'js', 'python'])}\n{lines}```")
            elif kind < 0.9:
                blocks.append("\n".join(f"- item {'z' * rng.randint(1, 150)}" for _ in range(99)))
            else:
                blocks.append("x" * rng.randint(1, 20_000))
        text = "\n\n".join(blocks)
        limit = rng.choice([500, 3_000, 12_000])

        parts = split_markdown(text, limit)

        assert all(0 < len(p) <= limit for p in parts)
        assert not any(_open_fence(p) for p in parts)
        assert _without_fence_lines("".join(parts)) == _without_fence_lines(text)
        if "```" not in text:
            assert "".join(parts) == text


def test_the_rest_of_an_answer_cut_inside_code_reopens_it() -> None:
    text = "Intro\n\n```js\nlet a = 1;\nlet b = 2;\n```\n\nOutro"
    inside = text.index("let b")
    assert rest_of(text, inside) == "```js\nlet b = 2;\n```\n\nOutro"
    assert rest_of(text, text.index("Outro")) == "Outro"
    assert rest_of(text, 3) == "ro\n\n```js\nlet a = 1;\nlet b = 2;\n```\n\nOutro"
