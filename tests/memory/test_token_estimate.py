"""Budgets in Claude's tokens, whatever the script: the estimate counts Japanese, Chinese,
Korean and Thai far above four characters a token, never below what the model (FakeClaude's
tokenizer, through the SDK's `count_tokens`) counts, and the memory block and the thread
history stay within their budgets in every script."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from anthropic import AsyncAnthropic

from app.agent.history import MAX_HISTORY_TOKENS, ThreadMessage, build_messages
from app.memory.formatting import TRUNCATION_MARKER, MemorySections, format_memory_context
from app.memory.token_estimate import clip_to_tokens, estimate_tokens
from tests.fakes.anthropic_api import FakeClaude

# The same note in several scripts (a sentence a person might ask Orion to remember).
SAMPLES = {
    "english": "Prefers short answers and metric units; works on the data platform team.",
    "japanese": "短い回答とメートル法を好みます。データ基盤チームで働いています。",
    "chinese": "喜欢简短的回答和公制单位；在数据平台团队工作。",
    "korean": "짧은 답변과 미터법을 선호하며 데이터 플랫폼 팀에서 일합니다.",
    "thai": "ชอบคำตอบสั้นๆ และหน่วยเมตริก ทำงานในทีมแพลตฟอร์มข้อมูล",
    "russian": "Предпочитает короткие ответы и метрические единицы; работает в команде данных.",
    "hindi": "छोटे उत्तर और मीट्रिक इकाइयाँ पसंद हैं; डेटा प्लेटफ़ॉर्म टीम में काम करते हैं।",
    "emoji": "Likes 🍵 and 🚲 — answers with 👍 are fine 🎉",
}
# Scripts a tokenizer spends about a token a character on, or more.
DENSE = ("japanese", "chinese", "korean", "thai", "hindi")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeClaude]:
    with FakeClaude() as claude:
        yield claude


@pytest.fixture
async def client(fake: FakeClaude) -> AsyncIterator[AsyncAnthropic]:
    async with AsyncAnthropic(base_url=fake.url, api_key="test", max_retries=0) as claude:
        yield claude


@pytest.mark.parametrize("script", DENSE)
def test_dense_scripts_count_at_least_a_token_a_character(script: str) -> None:
    text = SAMPLES[script]
    assert estimate_tokens(text) >= len(text)
    assert estimate_tokens(text) > 3 * -(-len(text) // 4)  # far above 4 characters a token


def test_english_counts_about_three_characters_a_token() -> None:
    text = SAMPLES["english"]
    assert len(text) / 3 <= estimate_tokens(text) <= len(text) / 3 + 1


@pytest.mark.parametrize("script", sorted(SAMPLES))
async def test_the_estimate_is_never_below_what_the_model_counts(
    script: str, client: AsyncAnthropic
) -> None:
    text = SAMPLES[script] * 20
    counted = await client.messages.count_tokens(
        model="claude-sonnet-5-5", messages=[{"role": "user", "content": text}]
    )
    overhead = await client.messages.count_tokens(
        model="claude-sonnet-5-5", messages=[{"role": "user", "content": ""}]
    )
    assert estimate_tokens(text) >= counted.input_tokens - overhead.input_tokens


@pytest.mark.parametrize("script", sorted(SAMPLES))
def test_a_clip_is_the_longest_start_within_the_budget(script: str) -> None:
    text = SAMPLES[script] * 50
    clipped = clip_to_tokens(text, 100)
    assert text.startswith(clipped)
    assert estimate_tokens(clipped) <= 100 < estimate_tokens(text[: len(clipped) + 1])
    assert clip_to_tokens(SAMPLES[script], 10_000) == SAMPLES[script]


@pytest.mark.parametrize("script", sorted(SAMPLES))
def test_the_memory_block_stays_within_its_token_budget_in_every_script(script: str) -> None:
    note = SAMPLES[script]
    sections = MemorySections(global_context=note * 200, session_summary=note * 200)

    block = format_memory_context(sections, token_budget=2000)

    assert block is not None and TRUNCATION_MARKER.strip() in block
    assert estimate_tokens(block) <= 2000
    if script in DENSE:
        # Four characters a token would have let about 8,000 characters through.
        assert len(block) <= 2500


def test_the_memory_block_puts_the_organisations_context_first_and_keeps_preferences_whole() -> (
    None
):
    sections = MemorySections(
        preferences='{"units": "metric"}',
        global_context=SAMPLES["japanese"] * 400,
        session_summary="We planned the offsite.",
    )

    block = format_memory_context(sections, token_budget=500)

    assert block is not None
    assert block.startswith("## Organisation context\n")
    assert "## User preferences\n- units: metric" in block  # the priority: kept whole
    assert estimate_tokens(block) <= 500


@pytest.mark.parametrize("script", ["english", "japanese", "thai"])
def test_the_thread_history_stays_within_its_token_budget_in_every_script(script: str) -> None:
    thread = []
    for n in range(30):
        thread += [
            ThreadMessage("user", f"{n}: {SAMPLES[script] * 12}"),
            ThreadMessage("assistant", SAMPLES[script] * 12),
        ]
    thread.append(ThreadMessage("user", "30: and now?"))

    messages = build_messages(thread)

    assert sum(estimate_tokens(m["content"]) for m in messages) <= MAX_HISTORY_TOKENS + 50
    assert messages[-1]["content"] == "30: and now?"  # the newest is always kept
