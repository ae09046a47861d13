"""FakeLangfuse: the part of Langfuse's public API that Orion's client sends to over HTTP.

Spans reach tests through an in-memory OpenTelemetry exporter (tests/conftest.py); scores
do not: the SDK batches them to `POST /api/public/scores`. This fake keeps each score by
its id, as Langfuse does (a score sent again with the same id replaces the first).

It also holds traces, as Langfuse's read model does: observations, each with its trace id
and the user id its trace carries. Tests put them there (`record_observation`, or
`SpanLog.send_to_langfuse` for the spans Orion exported); Orion finds a person's with
`GET /api/public/v2/observations?userId=…` (cursor-paged), a workspace's with a `filter` on
the `team_id` of their metadata, and deletes them with
`DELETE /api/public/traces` (`{"traceIds": […]}`) or `DELETE /api/public/traces/{id}`.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from tests.fakes._http_server import HttpFake

PROJECT_ID = "fake-project"
_MAX_PAGE = 1_000  # Langfuse's own limit on `limit`


class FakeLangfuse(HttpFake):
    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._scores: dict[str, dict[str, Any]] = {}
        self._observations: dict[str, dict[str, Any]] = {}  # by observation id
        self.posts = 0  # score batches received
        self.failing_status: int | None = None  # every API call answers this, when set
        # As an older Langfuse, which does not know `filter`: it lists every observation.
        self.ignores_filter = False

    def _routes(self) -> list[web.RouteDef]:
        return [
            web.post("/api/public/scores", self._create_scores),
            web.get("/api/public/v2/observations", self._list_observations),
            web.delete("/api/public/traces", self._delete_traces),
            web.delete("/api/public/traces/{trace_id}", self._delete_trace),
        ]

    def _refusal(self, request: web.Request) -> web.Response | None:
        if self.failing_status is not None:
            return web.json_response({"message": "Failing"}, status=self.failing_status)
        if not request.headers.get("Authorization", "").startswith("Basic "):
            return web.json_response({"message": "Unauthorized"}, status=401)
        return None

    async def _create_scores(self, request: web.Request) -> web.Response:
        if (refusal := self._refusal(request)) is not None:
            return refusal
        body = await request.json()
        batch = body if isinstance(body, list) else [body]
        with self._lock:
            self.posts += 1
            for score in batch:
                self._scores[str(score["id"])] = score
        return web.json_response({"message": "Accepted"}, status=202)

    async def _list_observations(self, request: web.Request) -> web.Response:
        if (refusal := self._refusal(request)) is not None:
            return refusal
        query = request.query
        limit = int(query.get("limit", "50"))
        if not 1 <= limit <= _MAX_PAGE:
            return web.json_response({"message": "limit out of range"}, status=400)
        offset = int(base64.b64decode(query["cursor"])) if "cursor" in query else 0
        if "filter" in query and not self.ignores_filter:
            # As Langfuse: a filter takes precedence over the query parameters.
            try:
                matches = _filter(json.loads(query["filter"]))
            except (ValueError, KeyError, TypeError):
                return web.json_response({"message": "Invalid filter"}, status=400)
        else:
            matches = _by_parameters(query)
        with self._lock:
            matching = [obs for obs in self._observations.values() if matches(obs)]
        page = matching[offset : offset + limit]
        meta: dict[str, Any] = {}
        if offset + limit < len(matching):
            meta["cursor"] = base64.b64encode(str(offset + limit).encode()).decode()
        return web.json_response({"data": page, "meta": meta})

    async def _delete_traces(self, request: web.Request) -> web.Response:
        if (refusal := self._refusal(request)) is not None:
            return refusal
        body = await request.json()
        self._forget(set(body["traceIds"]))
        return web.json_response({"message": "Traces deleted"})

    async def _delete_trace(self, request: web.Request) -> web.Response:
        if (refusal := self._refusal(request)) is not None:
            return refusal
        self._forget({request.match_info["trace_id"]})
        return web.json_response({"message": "Trace deleted"})

    def _forget(self, trace_ids: set[str]) -> None:
        with self._lock:
            for obs_id in [i for i, o in self._observations.items() if o["traceId"] in trace_ids]:
                del self._observations[obs_id]

    def record_observation(
        self,
        observation_id: str,
        trace_id: str,
        user_id: str | None,
        type_: str = "SPAN",
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """An observation Langfuse has ingested and processed, so that its API lists it."""
        observation = {
            "id": observation_id,
            "traceId": trace_id,
            "startTime": datetime.now(UTC).isoformat(),
            "projectId": PROJECT_ID,
            "type": type_,
            "userId": user_id,
            "metadata": metadata or {},
        }
        with self._lock:
            self._observations[observation_id] = observation

    def traces(self) -> dict[str, str | None]:
        """Every trace Langfuse holds, with the user id it carries."""
        with self._lock:
            return {obs["traceId"]: obs["userId"] for obs in self._observations.values()}

    def traces_of_team(self, team_id: str) -> set[str]:
        """The traces with an observation whose metadata names the workspace."""
        with self._lock:
            return {
                obs["traceId"]
                for obs in self._observations.values()
                if obs["metadata"].get("team_id") == team_id
            }

    def scores(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._scores.values())

    def clear(self) -> None:
        with self._lock:
            self._scores.clear()
            self._observations.clear()
            self.posts = 0
            self.failing_status = None
            self.ignores_filter = False


Match = Callable[[dict[str, Any]], bool]


def _by_parameters(query: Mapping[str, str]) -> Match:
    wanted = {
        field: query[param]
        for param, field in (("userId", "userId"), ("traceId", "traceId"))
        if param in query
    }
    return lambda obs: all(obs.get(field) == value for field, value in wanted.items())


def _filter(conditions: list[dict[str, Any]]) -> Match:
    """The filter conditions Orion sends (a metadata key equal to a value), all of them
    (Langfuse ANDs them); any other condition is refused, as an invalid one would be."""
    checks: list[tuple[str, str]] = []
    for condition in conditions:
        if (condition["type"], condition["column"], condition["operator"]) != (
            "stringObject",
            "metadata",
            "=",
        ):
            raise ValueError(f"this fake does not filter on {condition!r}")
        checks.append((str(condition["key"]), str(condition["value"])))
    return lambda obs: all(obs["metadata"].get(key) == value for key, value in checks)
