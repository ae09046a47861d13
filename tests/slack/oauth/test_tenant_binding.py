"""An event's writes count from before its authorization (app/slack/oauth/tenant_binding.py):
on a busy instance an event can find its workspace's installation, then wait while the
workspace uninstalls, and only then be bound and run. It began before the uninstall, so
what it writes is taken back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.request.async_request import AsyncBoltRequest

from app.memory.team_keys import team_scoped
from app.slack.oauth import tenant_binding
from app.slack.oauth.tenant_binding import stamp_authorization
from app.storage.local_directory import LocalDirectoryStore
from app.storage.team_scope import Tenant, TenantUninstalled
from tests.backends import erase_team
from tests.fakes import slack_events as events

TEAM = "TAAAA1"


def bolt_app(
    memory_dir: Path, outcome: dict[str, Any], *, stamped: bool
) -> tuple[AsyncApp, LocalDirectoryStore]:
    backend = LocalDirectoryStore(memory_dir)
    store = team_scoped(backend)

    async def authorize(**_: Any) -> AuthorizeResult:
        # The installation is found; then, before this request goes on, the workspace
        # uninstalls (another request on the same instance).
        await erase_team(backend, Tenant(None, TEAM))
        return AuthorizeResult(enterprise_id=None, team_id=TEAM, bot_token="xoxb-A", bot_id="B1")

    app = AsyncApp(
        authorize=authorize,
        request_verification_enabled=False,
        process_before_response=True,
        before_authorize=stamp_authorization if stamped else None,
    )
    tenant_binding.register(app)

    @app.event("app_home_opened")
    async def write_something(**_: Any) -> None:
        try:
            await store.write("users/U0SAME01/notes.md", "written after the uninstall")
            outcome["written"] = True
        except TenantUninstalled:
            outcome["taken_back"] = True

    return app, backend


def files_in(directory: Path) -> list[str]:
    return sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file())


@pytest.mark.parametrize("stamped", [True, False], ids=["as_orion_runs", "without_the_stamp"])
async def test_an_event_authorized_before_an_uninstall_and_bound_after_writes_nothing(
    tmp_path: Path, stamped: bool
) -> None:
    outcome: dict[str, Any] = {}
    app, _ = bolt_app(tmp_path, outcome, stamped=stamped)
    body = events.in_team(events.app_home_opened("U0SAME01", "DAAAA1", tab="home"), TEAM)

    response = await app.async_dispatch(
        AsyncBoltRequest(body=json.dumps(body), headers={"content-type": ["application/json"]})
    )

    assert response.status == 200
    left = files_in(tmp_path)
    if stamped:
        assert outcome == {"taken_back": True}
        assert left == [f"uninstalls/-/{TEAM}", f"uninstalls/pending/-/{TEAM}"]
    else:  # what this guards against: bound after the tombstone, the write would stay
        assert outcome == {"written": True}
