"""Fixtures that run a test module once per Slack experience (assistant_view, agent_view).

A module imports `experience` and `slack` from here: its `slack` fake then speaks the
experience under test, and every fixture built on `slack` follows.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.slack_api import FakeSlack


@pytest.fixture(params=["assistant", "agent"])
def experience(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def slack(experience: str) -> Iterator[FakeSlack]:
    with FakeSlack(agent_view=experience == "agent") as fake:
        yield fake
