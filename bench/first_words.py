"""First words: from Claude's first text delta to the first Slack write that carries text.

Configured: the fake Claude writes each answer at about Sonnet's pace — 24 characters every
80 ms — and records when it sends a stream's first text delta; the fake Slack records when
each call arrives (both on loopback, in this process, on one monotonic clock). Every
conversation has two turns: a question answered at once (the first turn), then a question
Claude answers after a memory tool call (`view`), which Orion runs against memories in a
local directory (the second turn, after a tool use). Conversations start a fraction of a
second apart, AT_ONCE of them in flight together, as a team's questions would.

Measured, in the same run, for:
- Orion in assistant_view (an assistant thread: its greeting, then the two turns);
- Orion in agent_view (a top-level DM, then a reply in its thread);
- a plain baseline bot doing the same work (bench/baseline_stream_bot.py: Bolt +
  anthropic + slack_sdk's `chat_stream` with its default 256-character buffer), in
  agent_view's shape;
the p50 / p95 / p99 of first-words latency per turn kind, and the `chat.appendStream` calls each
answer took (Slack rate-limits them per stream: the figure shows the batching holds).
Goal: first words within 0.35 s.

`uv run python -m bench.first_words [--quick]`
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx

from app.config import DEFAULT_MODEL
from bench.baseline_stream_bot import BaselineBot
from bench.environment import benchmark_environment
from bench.stats import median_ms, percentile_ms, print_table
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, FirstText, last_user_text
from tests.fakes.claude_script import ScriptItem, text, tool_use
from tests.fakes.slack_api import Call, FakeSlack
from tests.orion_server import BOT_TOKEN, SIGNING_SECRET, OrionServer, make_settings

PACE_CHARS, PACE_S = 24, 0.08  # Sonnet's pace, about
GOAL_S = 0.35
STAGGER_S = 1.0  # conversations start within this much of each other
TIMEOUT_S = 120.0
WRITES_WITH_TEXT = ("chat.startStream", "chat.appendStream", "chat.postMessage", "chat.update")
LOOKUP = "check what you remember about me"


class Bot(Protocol):
    def post_event(self, payload: dict[str, Any]) -> httpx.Response: ...


@dataclass(frozen=True)
class Answer:
    kind: str  # "first turn" | "after a tool use"
    first_words_s: float
    appends: int


@dataclass(frozen=True)
class Plan:
    conversations: int
    at_once: int
    answer_chars: int


def _answer_text(chars: int) -> str:
    words = " ".join(f"word{n}" for n in range(chars))
    return words[:chars]


def responder(answer: str, main_model: str) -> Callable[[dict[str, Any]], ScriptItem | None]:
    """Claude, as the fake plays it: the answer at Sonnet's pace; a memory `view` first when
    the question asks to check the memory; short and instant for the warm-up and for the
    session summary (another model, in the background)."""

    def respond(body: dict[str, Any]) -> ScriptItem | None:
        question = last_user_text(body)
        if body.get("model") != main_model or question.startswith("warm"):
            return text("Noted.")
        last = body["messages"][-1]["content"]
        looked_up = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
        if LOOKUP in question and not looked_up:
            return tool_use("memory", {"command": "view", "path": "/memories/global"})
        return text(answer, chunk_delay=PACE_S, delta_chars=PACE_CHARS)

    return respond


class Conversations:
    """One bot's conversations against one fake Slack (each in a DM of its own)."""

    def __init__(self, bot: Bot, slack: FakeSlack, name: str, *, assistant_threads: bool) -> None:
        self._bot, self._slack, self._name = bot, slack, name
        self._assistant_threads = assistant_threads

    def run(self, n: int, tag: str = "q", *, delay: float = 0.0) -> list[tuple[str, str]]:
        """Conversation `n`'s two turns; returns (channel, question) of each."""
        time.sleep(delay)
        user, channel = f"U0FW{self._name}{n:03d}", f"D0FW{self._name}{n:03d}"
        first = f"{tag} {self._name} {n}: how do we deploy the billing service?"
        second = f"{tag} {self._name} {n}: {LOOKUP}, then tell me more."
        thread_ts, answered = None, 0
        if self._assistant_threads:
            thread_ts = self._slack.open_assistant_thread(channel)
            self._post(events.assistant_thread_started(user, channel, thread_ts))
            answered = self._wait_answers(channel, 1)  # the greeting
        thread_ts = self._ask(user, channel, thread_ts, first)
        answered = self._wait_answers(channel, answered + 1)
        self._ask(user, channel, thread_ts, second)
        self._wait_answers(channel, answered + 1)
        return [(channel, first), (channel, second)]

    def _ask(self, user: str, channel: str, thread_ts: str | None, question: str) -> str:
        ts = self._slack.add_user_message(channel, thread_ts, user, question)
        if thread_ts is None:
            self._post(events.top_level_dm(user, channel, question, ts=ts))
            return ts
        self._post(events.user_message_in_thread(user, channel, thread_ts, question, ts=ts))
        return thread_ts

    def _post(self, payload: dict[str, Any]) -> None:
        response = self._bot.post_event(payload)
        if response.status_code != 200:
            raise RuntimeError(f"event not acknowledged: {response.status_code}")

    def _wait_answers(self, channel: str, count: int) -> int:
        self._slack.wait_for(
            lambda: self._slack.finished_bot_messages(channel) >= count,
            timeout=TIMEOUT_S,
            what=f"{count} finished messages in {channel}",
        )
        return count


def _measure(
    conversations: Conversations, slack: FakeSlack, claude: FakeClaude, plan: Plan
) -> list[Answer]:
    conversations.run(0, tag="warm")  # connections, lazy imports: not measured
    rng = random.Random(7)
    with ThreadPoolExecutor(max_workers=plan.at_once) as pool:
        futures = [
            pool.submit(conversations.run, n, delay=rng.uniform(0, STAGGER_S) if n else 0.0)
            for n in range(1, plan.conversations + 1)
        ]
        turns = [turn for future in futures for turn in future.result()]
    sent = claude.first_texts
    calls = slack.calls
    return [
        _answer(kind, channel, _first_text(sent, question), calls)
        for (channel, question), kind in zip(
            turns, ["first turn", "after a tool use"] * plan.conversations, strict=True
        )
    ]


def _first_text(sent: list[FirstText], question: str) -> FirstText:
    [first] = [f for f in sent if last_user_text(f.body) == question]
    return first


def _answer(kind: str, channel: str, first: FirstText, calls: list[Call]) -> Answer:
    after = [c for c in calls if c.args.get("channel") == channel and c.at >= first.at]
    written = next(c for c in after if c.method in WRITES_WITH_TEXT and _text_of(c))
    end = next(c for c in after if c.method in ("chat.stopStream", "chat.postMessage"))
    appends = [c for c in after if c.method == "chat.appendStream" and c.at <= end.at]
    return Answer(kind, written.at - first.at, len(appends))


def _text_of(call: Call) -> str:
    """The text a call shows: `markdown_text`, `text`, or markdown chunks (slack_sdk's
    `chat_stream` sends chunks)."""
    args = call.args
    chunks = args.get("chunks") or []
    shown = "".join(c.get("text") or "" for c in chunks if c.get("type") == "markdown_text")
    return (args.get("markdown_text") or "") + (args.get("text") or "") + shown


def _orion(
    claude: FakeClaude, memory_dir: Path, answer: str, plan: Plan, experience: str
) -> list[Answer]:
    with FakeSlack(agent_view=experience == "agent") as slack:
        settings = make_settings(
            slack, claude, memory_dir=memory_dir / experience, slack_experience=experience
        )
        claude.responder = responder(answer, settings.anthropic_model)
        with OrionServer(settings) as orion:
            name = "A" if experience == "assistant" else "G"
            conversations = Conversations(
                orion, slack, name, assistant_threads=experience == "assistant"
            )
            return _measure(conversations, slack, claude, plan)


def _baseline(claude: FakeClaude, answer: str, plan: Plan, model: str) -> list[Answer]:
    with FakeSlack() as slack:
        claude.responder = responder(answer, model)
        bot = BaselineBot(
            token=BOT_TOKEN,
            signing_secret=SIGNING_SECRET,
            slack_url=slack.url,
            claude_url=claude.url,
            model=model,
        )
        with bot:
            conversations = Conversations(bot, slack, "B", assistant_threads=False)
            return _measure(conversations, slack, claude, plan)


def _latency(answers: list[Answer], kind: str) -> tuple[str, list[float]]:
    seconds = [a.first_words_s for a in answers if a.kind == kind]
    figures = (median_ms(seconds), percentile_ms(seconds, 95), percentile_ms(seconds, 99))
    return " / ".join(map(str, figures)) + " ms", seconds


def _appends(answers: list[Answer]) -> str:
    counts = [a.appends for a in answers]
    return f"{statistics.median(counts):g} (max {max(counts)})"


def run(quick: bool) -> list[tuple[str, str]]:
    plan = Plan(conversations=3, at_once=3, answer_chars=480) if quick else Plan(20, 10, 2_000)
    answer = _answer_text(plan.answer_chars)
    with (
        benchmark_environment(),
        FakeClaude() as claude,
        tempfile.TemporaryDirectory() as memories,
    ):
        results = {
            "Orion, assistant_view": _orion(claude, Path(memories), answer, plan, "assistant"),
            "Orion, agent_view": _orion(claude, Path(memories), answer, plan, "agent"),
            "baseline bot": _baseline(claude, answer, plan, DEFAULT_MODEL),
        }

    rows = [
        (
            "first words: configured",
            f"fake Claude {PACE_CHARS} chars every {PACE_S * 1000:g} ms, answers of "
            f"{plan.answer_chars:,} chars; {plan.conversations} conversations × 2 turns per bot, "
            f"{plan.at_once} at once; Slack and Claude fakes on loopback",
        )
    ]
    worst = 0.0
    for bot, answers in results.items():
        for kind in ("first turn", "after a tool use"):
            figure, seconds = _latency(answers, kind)
            rows.append((f"first words p50 / p95 / p99: {bot}, {kind} ({len(seconds)})", figure))
            if bot.startswith("Orion"):
                worst = max(worst, percentile_ms(seconds, 95) / 1000)
    for bot, answers in results.items():
        rows.append(
            (
                f"appendStream calls per {plan.answer_chars:,}-char answer: {bot}, median (max)",
                _appends(answers),
            )
        )
    verdict = "met" if worst <= GOAL_S else "MISSED"
    rows.append(
        (
            f"first words goal ≤ {GOAL_S * 1000:g} ms (Orion's worst p95)",
            f"{verdict}: {worst * 1000:.1f} ms",
        )
    )
    return rows


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
