"""The baseline for Orion's per-turn CPU: the Claude SDK alone, making the same calls.

Replays request bodies that Orion sent to the fake Claude, with the client Orion builds
(`app.services.build_claude_client`), in a separate process, as many turns at once as the
throughput benchmark runs; prints this process's CPU time per turn, the median over
batches (JSON). A streamed body is consumed as the agent loop consumes it (text stream,
then the final message); the others are plain `messages.create` calls (the session summary).

Input on stdin: {"claude_url": ..., "turns": [[body, ...], ...], "concurrency": N}.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from typing import Any

import uvloop

from app.config import Settings
from app.services import build_claude_client


async def _call(claude: Any, body: dict[str, Any]) -> None:
    request = {key: value for key, value in body.items() if key != "stream"}
    if body.get("stream"):
        async with claude.messages.stream(**request) as stream:
            async for _ in stream.text_stream:
                pass
            await stream.get_final_message()
    else:
        await claude.messages.create(**request)


async def _replay(claude_url: str, turns: list[list[dict[str, Any]]], concurrency: int) -> float:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        slack_bot_token="xoxb-baseline",
        anthropic_api_key="baseline",
        anthropic_base_url=claude_url,
        anthropic_max_retries=0,
    )
    claude = build_claude_client(settings)

    async def turn(bodies: list[dict[str, Any]]) -> None:
        for body in bodies:  # in order, as in a turn: the answer, then the summary
            await _call(claude, body)

    async def batch(batch_turns: list[list[dict[str, Any]]]) -> float:
        """CPU seconds per turn for these turns, all at once."""
        started = time.process_time()
        await asyncio.gather(*(turn(t) for t in batch_turns))
        return (time.process_time() - started) / len(batch_turns)

    await batch(turns[:concurrency])  # warm-up: connections, lazy imports
    per_turn = [
        await batch(turns[start : start + concurrency])
        for start in range(0, len(turns), concurrency)
    ]
    await claude.close()
    return statistics.median(per_turn)


if __name__ == "__main__":
    spec = json.load(sys.stdin)
    per_turn = uvloop.run(_replay(spec["claude_url"], spec["turns"], spec["concurrency"]))
    print(json.dumps(per_turn))
