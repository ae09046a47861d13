"""Prompt cache: input tokens billed per turn for a five-call tool loop, before and after.

Orion's agent loop (app/agent/loop.py) answers two turns of one realistic thread (a
returning person's memory block, an organisation context, twelve earlier messages), each
turn four memory-tool calls then the answer: five Claude calls a turn. FakeClaude, as
Sonnet 5.5, counts the tokens and caches by prefix as the API does (tests/fakes/
claude_cache.py: 512-token minimum, at most 4 breakpoints, 20-block lookback).

- after: the requests as Orion sends them (breakpoints after the fixed instructions, after
  the memory block, and on the conversation so far, app/agent/prompt_cache.py);
- before: the very same requests with the one breakpoint Orion used to place, on the
  instructions block, replayed through a fresh cache.

"Billed" counts every input token at its price in input-token units: read fresh 1, written
to the cache 1.25, read from it 0.1. Deterministic: the fake's tokenizer, not a model's.

Run alone with `uv run python -m bench.prompt_cache`.
"""

from __future__ import annotations

import asyncio
import copy
import tempfile
from pathlib import Path
from typing import Any

from anthropic import AsyncAnthropic

from app.agent.history import ThreadMessage, build_messages
from app.agent.loop import run_agent_loop
from app.agent.prompts import build_system_prompt
from app.agent.toolbox import tools_for_turn
from app.memory.formatting import MemorySections, format_memory_context
from app.memory.scopes import MemoryScope
from app.memory.tool.guide import memory_tool_guide
from app.storage.local_directory import LocalDirectoryStore
from bench.environment import benchmark_environment
from bench.stats import print_table
from tests.fakes import claude_script as script
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.claude_cache import PromptCache
from tests.fakes.claude_thinking import strip_cache_control

MODEL = "claude-sonnet-5-5"
USER, THREAD = "U0BENCHPC", "1730000000.000100"
WRITE_PRICE, READ_PRICE = 1.25, 0.1
TOOL_CALLS = 4  # and the answer: five calls a turn

ORGANISATION = (
    "Kestrel Labs builds data tooling for logistics companies. Teams: platform (data "
    "pipelines, on GCP), product (the web app), finance and operations. Quarterly planning "
    "happens in the last two weeks of each quarter; budgets are owned by team leads and "
    "reviewed by finance. Production changes need a ticket in the CHG project and a second "
    "reviewer. The on-call rota is in PagerDuty; incidents are written up within five days. "
) * 4
PREFERENCES = '{"name": "Sam", "units": "metric", "answers": "short, with a table when comparing"}'
EARLIER = (
    "Last time we compared Q2 cloud spend by region: europe-west1 was 38% of the bill, "
    "mostly BigQuery on-demand queries from the nightly reports."
)
QUESTIONS = [
    "Can you compare our Q2 and Q3 cloud spend by region and tell me where the overrun "
    "comes from? Finance wants an answer by Friday.",
    "Good. Now draft the note to finance, with the three biggest items and what we do next.",
]


def thread_history() -> list[ThreadMessage]:
    history: list[ThreadMessage] = []
    for n in range(6):
        history.append(
            ThreadMessage(
                "user",
                f"Question {n} about the migration of the reporting jobs: which of them can "
                f"move to batch slots, and what does step {n} cost us per month?",
            )
        )
        history.append(
            ThreadMessage(
                "assistant",
                f"For step {n}: the nightly revenue and fleet reports can move to batch "
                "slots; the hourly ETA dashboard cannot, it needs fresh data. Moving the "
                "two saves about 1,900 EUR a month; the change needs a CHG ticket.",
            )
        )
    return history


def _loop_replies(claude: FakeClaude, turn: int) -> None:
    for n in range(TOOL_CALLS):
        path = f"/memories/users/{USER}/notes-{turn}-{n}.md"
        create = {"command": "create", "path": path, "file_text": f"Cloud spend note {n}.\n"}
        claude.reply_tool_use("memory", create, text=f"Noting finding {n} for later.")
    claude.reply(
        "Q3 is 21% over Q2: BigQuery on-demand in europe-west1 (+14 points) and two idle "
        "GKE node pools (+5). Next: move the nightly reports to batch slots."
    )


async def _two_turns(claude: FakeClaude, memories: Path) -> list[list[dict[str, Any]]]:
    """The request bodies of each turn, as Orion sent them."""
    scope = MemoryScope(USER, THREAD)
    memory = format_memory_context(
        MemorySections(PREFERENCES, ORGANISATION, EARLIER), token_budget=2000
    )
    system = build_system_prompt(
        memory_guide=memory_tool_guide(scope), memory_context=memory, recall=True
    )
    history = thread_history()
    turns: list[list[dict[str, Any]]] = []
    async with AsyncAnthropic(base_url=claude.url, api_key="bench", max_retries=0) as client:
        for turn, question in enumerate(QUESTIONS):
            _loop_replies(claude, turn)
            history.append(ThreadMessage("user", question))
            sent = len(claude.requests)
            result = await run_agent_loop(
                client,
                model=MODEL,
                system=system,
                messages=build_messages(history),
                tools=tools_for_turn(store=LocalDirectoryStore(memories), scope=scope),
                sink=_Quiet(),
            )
            history.append(ThreadMessage("assistant", result.text))
            turns.append(claude.requests[sent:])
    return turns


class _Quiet:
    async def append(self, markdown: str) -> None:
        pass

    async def show_progress(self, status: str) -> None:
        pass

    async def show_task(self, task: Any) -> None:
        pass


def _as_before(body: dict[str, Any]) -> dict[str, Any]:
    """`body` with Orion's old breakpoint: the instructions block only."""
    old = strip_cache_control(copy.deepcopy(body))
    old["system"][0]["cache_control"] = {"type": "ephemeral"}
    return old


def _billed(turns: list[list[dict[str, Any]]]) -> list[dict[str, float]]:
    """Each turn's input usage, replayed through a fresh cache in order."""
    cache = PromptCache()
    figures = []
    for bodies in turns:
        fresh = read = written = 0
        for body in bodies:
            usage = cache.usage(body, script.count_tokens)
            fresh += usage.input_tokens
            read += usage.cache_read_input_tokens
            written += usage.cache_creation_input_tokens
        billed = fresh + WRITE_PRICE * written + READ_PRICE * read
        figures.append(
            {
                "fresh": fresh,
                "read": read,
                "written": written,
                "billed": billed,
                "calls": len(bodies),
            }
        )
    return figures


def run(quick: bool) -> list[tuple[str, str]]:
    with (
        benchmark_environment(),
        FakeClaude() as claude,
        tempfile.TemporaryDirectory() as memories,
    ):
        turns = asyncio.run(_two_turns(claude, Path(memories)))
    after = _billed(turns)
    before = _billed([[_as_before(body) for body in bodies] for bodies in turns])
    rows = []
    for n, (was, now) in enumerate(zip(before, after, strict=True), start=1):
        prompt = was["fresh"] + was["read"] + was["written"]
        rows.append(
            (
                f"prompt cache, turn {n} of a thread ({now['calls']:.0f} calls, {prompt:.0f} "
                "prompt tokens): input tokens billed, before → after",
                f"{was['billed']:,.0f} → {now['billed']:,.0f} "
                f"({now['billed'] / was['billed']:.2f}×)",
            )
        )
        rows.append(
            (
                f"prompt cache, turn {n}: fresh / written / read tokens, before; after",
                f"{was['fresh']:,.0f} / {was['written']:,.0f} / {was['read']:,.0f}; "
                f"{now['fresh']:,.0f} / {now['written']:,.0f} / {now['read']:,.0f}",
            )
        )
    return rows


if __name__ == "__main__":
    print_table(run(quick=False))
