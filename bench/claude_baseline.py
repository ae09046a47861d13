"""The baseline for Orion's per-turn CPU: the Claude SDK alone, making the same calls.

Replays request bodies that Orion sent to the fake Claude, with the client Orion builds
(`app.services.build_claude_client`), in a separate process, as many turns at once as the
throughput benchmark runs. A streamed body is consumed as the agent loop consumes it (text
stream, then the final message); the others are plain `messages.create` calls (the session
summary).

It runs beside Orion for the whole benchmark and replays each batch right after Orion has
answered it, so that the two figures compared are measured moments apart: on a shared
machine the same work costs more CPU in one minute than in the next.

Protocol, one JSON document per line: the first line on stdin is
{"claude_url": ...}; every later line is one batch, a list of turns (each the list of
bodies of one turn, in order), and gets one line back on stdout: this process's CPU
seconds per turn for that batch. The first batch warms up (connections, lazy imports).
"""

from __future__ import annotations

import asyncio
import json
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


async def _serve(claude_url: str) -> None:
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

    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        turns = json.loads(line)
        started = time.process_time()
        await asyncio.gather(*(turn(t) for t in turns))
        per_turn = (time.process_time() - started) / max(len(turns), 1)
        print(json.dumps(per_turn), flush=True)
    await claude.close()


if __name__ == "__main__":
    config = json.loads(sys.stdin.readline())
    uvloop.run(_serve(config["claude_url"]))
