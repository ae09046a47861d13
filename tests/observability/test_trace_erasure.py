"""A workspace's traces are deleted by what Langfuse answers about each observation
(app/observability/tracing.py): whatever shape that answer's metadata takes, only the
observations that name the workspace lose their traces, and the erasure finishes."""

from __future__ import annotations

from typing import Any

from app.observability import tracing
from tests.fakes.langfuse_api import FakeLangfuse
from tests.span_log import SpanLog


async def test_only_observations_naming_the_workspace_lose_their_traces(
    spans: SpanLog,  # tracing on, against the fake Langfuse
    fake_langfuse: FakeLangfuse,
) -> None:
    fake_langfuse.ignores_filter = True  # every observation is listed, as an older server does
    team = "TAAAA1"
    strange: list[Any] = [[team], {"id": team}, 12, None, team * 10_000, f" {team}", team.lower()]
    fake_langfuse.record_observation("o-a", "trace-a", "U1", metadata={"team_id": team})
    fake_langfuse.record_observation("o-a2", "trace-a", "U1", metadata={"team_id": f'"{team}"'})
    for n, value in enumerate(strange):
        fake_langfuse.record_observation(f"o-{n}", f"trace-{n}", "U1", metadata={"team_id": value})
    fake_langfuse.record_observation("o-none", "trace-none", "U1")

    assert await tracing.forget_team_traces(team) == 1

    assert "trace-a" not in fake_langfuse.traces()
    assert len(fake_langfuse.traces()) == len(strange) + 1, "the others are kept"
