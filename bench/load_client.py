"""Post N signed events at once from a separate process; print each ack latency (JSON).

Kept out of the benchmark's own process, whose threads serve the fakes: timing the acks
there would also time the fakes' work. aiohttp rather than httpx: with a hundred requests
in flight httpx's own connection pool, not the server, dominated the figures. Connections
are opened first (Slack keeps its connections alive), so the figure is the ack itself.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import aiohttp


async def _post_all(url: str, health_url: str, requests: list[dict]) -> list[float]:
    latencies: list[float] = []
    connector = aiohttp.TCPConnector(limit=len(requests))
    async with aiohttp.ClientSession(connector=connector) as http:

        async def warm() -> None:
            async with http.get(health_url) as response:
                await response.read()

        await asyncio.gather(*(warm() for _ in requests))

        async def one(request: dict) -> None:
            started = time.perf_counter()
            async with http.post(
                url, data=request["body"].encode(), headers=request["headers"]
            ) as r:
                await r.read()
                latencies.append(time.perf_counter() - started)
                r.raise_for_status()

        await asyncio.gather(*(one(r) for r in requests))
    return latencies


if __name__ == "__main__":
    spec = json.load(sys.stdin)
    latencies = asyncio.run(_post_all(spec["url"], spec["health_url"], spec["requests"]))
    print(json.dumps(latencies))
