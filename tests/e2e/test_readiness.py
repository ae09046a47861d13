"""`/readyz` tells the truth (503 with the reason until Orion can do its job, 200 once it
can) while `/healthz` stays a cheap 200 throughout (app/readiness.py).

End to end over HTTP against the real Orion app: the services still building, the bucket
unreachable (the GCS emulator behind a FaultyProxy answering 503) and back, Slack
refusing the bot token or failing for a moment. Every wait is on an explicit signal.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import httpx

from app.services import build_claude_client
from tests import log_events
from tests.fakes._waiting import wait_until
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import (
    ANTHROPIC_KEY,
    BOT_TOKEN,
    SIGNING_SECRET,
    HeldClaudeClient,
    OrionServer,
    make_settings,
    orion_servers,
)

SECRETS = (BOT_TOKEN, SIGNING_SECRET, ANTHROPIC_KEY)


def readyz(orion: OrionServer) -> httpx.Response:
    response = orion.http.get("/readyz")
    assert response.headers["content-type"] == "application/json"
    assert not any(secret in response.text for secret in SECRETS), "no secret, ever"
    return response


def wait_ready(orion: OrionServer, timeout: float = 30.0) -> dict[str, Any]:
    response = wait_until(
        lambda: (r := readyz(orion)).status_code == 200 and r, timeout, "/readyz 200"
    )
    return response.json()


def healthy(orion: OrionServer) -> bool:
    return orion.http.get("/healthz").status_code == 200


def test_not_ready_while_the_services_build_and_ready_once_they_are(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    held = HeldClaudeClient()

    settings = make_settings(slack, claude, memory_dir=memory_dir)
    with OrionServer(settings, claude_factory=held) as orion:
        try:
            held.wait_loading()
            response = readyz(orion)
            assert response.status_code == 503
            body = response.json()
            assert body["ready"] is False
            assert body["checks"]["services"] == {"ok": False, "state": "building", "attempts": 1}
            assert body["checks"]["claude"] == {"ok": False, "state": "not_built"}
            assert body["reasons"][0] == "services: not ready yet (starting)"
            assert healthy(orion)
        finally:
            held.release()
        body = wait_ready(orion)
        assert body["reasons"] == []
        assert {name: check["ok"] for name, check in body["checks"].items()} == {
            "services": True,
            "claude": True,
            "storage": True,
            "slack_auth": True,
        }
        assert body["checks"]["storage"] == {"ok": True, "state": "ready", "backend": "local"}
        assert healthy(orion)


def test_an_unreachable_bucket_is_reported_as_degraded_and_cleared_once_it_answers(
    gcs_proxy: FaultyProxy, slack: FakeSlack, claude: FakeClaude, gcs_bucket: str
) -> None:
    outage = gcs_proxy.add_rule("", status=503)  # down from the very start
    # As a fresh process: the store is built and checked in the background.
    settings = make_settings(slack, claude, gcs_memories_bucket=gcs_bucket)
    with OrionServer(settings, claude_factory=build_claude_client) as orion:
        _check_outage_then_recovery(orion, gcs_proxy, gcs_bucket)
    assert outage.hits >= 1


def _check_outage_then_recovery(orion: OrionServer, gcs_proxy: FaultyProxy, bucket: str) -> None:
    # The start-up check finds out, before any person does.
    [down] = orion.wait_logged(log_events.STORE_UNAVAILABLE)
    assert "event_id" not in down, "found by the check at start, not by someone's event"
    # Degraded, not unready: Orion greets and answers without memories meanwhile.
    response = wait_until(
        lambda: (r := readyz(orion)).status_code == 200 and r, 30.0, "/readyz 200, degraded"
    )
    assert response.json()["degraded"] is True
    storage = response.json()["checks"]["storage"]
    assert storage == {"ok": False, "state": "unreachable", "backend": "gcs", "breaker": "open"}
    assert any(r.startswith("storage: unreachable") for r in response.json()["reasons"])
    assert bucket not in response.text and gcs_proxy.url not in response.text
    assert healthy(orion), "liveness must not restart an instance for a storage outage"

    gcs_proxy.clear_rules()
    orion.wait_logged(log_events.STORE_RECOVERED, timeout=30)
    body = wait_until(
        lambda: (b := wait_ready(orion))["degraded"] is False and b, 30.0, "not degraded"
    )
    assert body["checks"]["storage"]["breaker"] == "closed"
    assert healthy(orion)


def test_slack_refusing_the_token_keeps_it_not_ready_for_good(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    slack.inject_error("auth.test", error="invalid_auth", status=200, times=None)
    with orion_servers(slack, claude, memory_dir=memory_dir) as start:
        orion = start()
        [refused] = orion.wait_logged(log_events.SLACK_AUTH_FAILED)
        assert refused["retry_in_s"] is None, "a refused token is not asked again"
        response = readyz(orion)
        assert response.status_code == 503
        assert response.json()["checks"]["slack_auth"]["state"] == "failed"
        assert response.json()["reasons"] == [
            "slack_auth: Slack refused the bot token: invalid_auth"
        ]
        assert healthy(orion)
    assert len(slack.calls_to("auth.test")) == 1


def test_slack_failing_for_a_moment_is_checked_again_until_it_answers(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    # A gateway error, which the Web API client does not retry by itself: the check fails
    # once, and Orion asks again after its back-off.
    slack.inject_error("auth.test", error="bad_gateway", status=502, times=1)
    with orion_servers(slack, claude, memory_dir=memory_dir) as start:
        orion = start()
        [failed] = orion.wait_logged(log_events.SLACK_AUTH_FAILED)
        assert failed["retry_in_s"] == 0.5 and "Traceback" in failed["exception"]
        [ready] = orion.wait_logged(log_events.SLACK_AUTH_READY)
        assert ready["attempts"] == 2
        assert wait_ready(orion)["checks"]["slack_auth"]["state"] == "ready"


def test_a_memory_directory_that_stops_being_usable_is_never_called_fine(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    with OrionServer(make_settings(slack, claude, memory_dir=memory_dir)) as orion:
        assert wait_ready(orion)["checks"]["storage"]["ok"] is True
        # Someone removes the directory and leaves a file in its place.
        shutil.rmtree(memory_dir, ignore_errors=True)
        memory_dir.write_text("not a directory")

        response = readyz(orion)

        assert response.status_code == 503
        body = response.json()
        assert body["checks"]["storage"] == {"ok": False, "state": "unusable", "backend": "local"}
        assert body["reasons"] == ["storage: the memory directory (MEMORY_DIR) is not a directory"]
        assert str(memory_dir) not in response.text, "the endpoint is public: no paths"

        memory_dir.unlink()  # gone, but it can be made again: fine once more
        assert wait_ready(orion)["checks"]["storage"]["ok"] is True
