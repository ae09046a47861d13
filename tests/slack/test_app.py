"""Building the Bolt app: one unambiguous configuration, Orion's client settings on it."""

from __future__ import annotations

import logging

import pytest
from slack_bolt.middleware.authorization.async_single_team_authorization import (
    AsyncSingleTeamAuthorization,
)

from app.config import RunMode
from app.services import ServiceProvider, build_services, build_storage
from app.slack.app import build_bolt_app, share_token_check
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import make_settings


def test_bolt_is_built_without_warnings_and_with_orions_client_settings(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-from-the-environment")  # as in Cloud Run
    with FakeSlack() as slack, FakeClaude() as claude:
        settings = make_settings(slack, claude, memory_dir=tmp_path)
        with caplog.at_level(logging.WARNING):
            provider = ServiceProvider(build_services(settings, build_storage(settings)))
            app = build_bolt_app(settings, provider, mode=RunMode.HTTP)
    assert not [r for r in caplog.records if "unused" in r.getMessage()], caplog.text
    assert app.client.base_url == slack.url
    assert app.client.token == settings.slack_bot_token.get_secret_value()
    assert {type(h).__name__ for h in app.client.retry_handlers} == {
        "AsyncConnectionErrorRetryHandler",
        "AsyncRateLimitErrorRetryHandler",
        "AsyncServerErrorRetryHandler",
    }


def test_the_token_check_reaches_bolts_own_authorization(tmp_path) -> None:
    with FakeSlack() as slack, FakeClaude() as claude:
        settings = make_settings(slack, claude, memory_dir=tmp_path)
        provider = ServiceProvider(build_services(settings, build_storage(settings)))
        app = build_bolt_app(settings, provider, mode=RunMode.HTTP)
    answer = object()
    share_token_check(app, answer)  # type: ignore[arg-type]
    # The one private name used (Bolt offers no way to hand it the answer).
    steps = [
        step
        for step in getattr(app, "_async_middleware_list", ())
        if isinstance(step, AsyncSingleTeamAuthorization)
    ]
    assert steps and steps[0].auth_test_result is answer, (
        "share_token_check (app/slack/app.py) no longer reaches Bolt's single-workspace "
        "authorization: each event of a fresh process would ask auth.test again"
    )
