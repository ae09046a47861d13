"""FakeLangfuse: the part of Langfuse's public API that Orion's client sends to over HTTP.

Spans reach tests through an in-memory OpenTelemetry exporter (tests/conftest.py); scores
do not: the SDK batches them to `POST /api/public/scores`. This fake keeps each score by
its id, as Langfuse does (a score sent again with the same id replaces the first).
"""

from __future__ import annotations

import threading
from typing import Any

from aiohttp import web

from tests.fakes._http_server import HttpFake


class FakeLangfuse(HttpFake):
    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._scores: dict[str, dict[str, Any]] = {}
        self.posts = 0  # score batches received

    def _routes(self) -> list[web.RouteDef]:
        return [web.post("/api/public/scores", self._create_scores)]

    async def _create_scores(self, request: web.Request) -> web.Response:
        if not request.headers.get("Authorization", "").startswith("Basic "):
            return web.json_response({"message": "Unauthorized"}, status=401)
        body = await request.json()
        batch = body if isinstance(body, list) else [body]
        with self._lock:
            self.posts += 1
            for score in batch:
                self._scores[str(score["id"])] = score
        return web.json_response({"message": "Accepted"}, status=202)

    def scores(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._scores.values())

    def clear(self) -> None:
        with self._lock:
            self._scores.clear()
            self.posts = 0
