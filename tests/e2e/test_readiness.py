"""`/readyz` tells the truth (200 once Orion listens, which it does only once it can do
its job; degraded or 503 with the reason) while `/healthz` stays a cheap 200 throughout
(app/http_server.py, `readiness`).

End to end over HTTP against the real Orion app, started as `orion serve` starts: the
bucket unreachable (the GCS emulator behind a FaultyProxy answering 503) and back, Slack
failing for a moment; and the real process, stopped before it listens by a bot token
Slack refuses or a Slack it cannot reach. Every wait is on an explicit signal.
"""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from app.config import EXIT_UNAVAILABLE
from tests import log_events
from tests.fakes import slack_events as events
from tests.fakes._waiting import wait_until
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import free_port, orion_env, run_orion_command
from tests.orion_server import (
    ANTHROPIC_KEY,
    BOT_TOKEN,
    SIGNING_SECRET,
    OrionServer,
    make_settings,
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


def test_ready_as_soon_as_it_listens(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    settings = make_settings(slack, claude, memory_dir=memory_dir)
    with OrionServer(settings, started_as_deployed=True) as orion:
        # Built, the store asked and the bot token checked before the server listened.
        response = readyz(orion)
        assert response.status_code == 200
        body = response.json()
        assert body == {
            "ready": True,
            "degraded": False,
            "reasons": [],
            "checks": {
                "serving": {"ok": True, "state": "ready"},
                "storage": {"ok": True, "state": "ready", "backend": "local"},
            },
        }
        assert healthy(orion)
    assert len(slack.calls_to("auth.test")) == 1


def test_the_token_checked_before_serving_is_not_asked_again_by_a_burst_of_events(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    # Bolt's own authorization would ask auth.test on each event until one answer came
    # back: a fresh process's first burst asked once per event, each waiting for it.
    settings = make_settings(slack, claude, memory_dir=memory_dir)
    with OrionServer(settings, started_as_deployed=True) as orion:
        assert len(slack.calls_to("auth.test")) == 1  # the check before listening
        users = [f"U0BURST{n}" for n in range(4)]
        with ThreadPoolExecutor(len(users)) as pool:
            answers = list(
                pool.map(lambda user: orion.post_event(_thread_started(slack, user)), users)
            )
        assert [answer.status_code for answer in answers] == [200] * len(users)
        for user in users:
            wait_until(lambda user=user: _greeted(slack, user), 30, f"{user} greeted")
    assert len(slack.calls_to("auth.test")) == 1


def _thread_started(slack: FakeSlack, user: str) -> dict[str, Any]:
    channel = "D" + user[1:]
    return events.assistant_thread_started(user, channel, slack.open_assistant_thread(channel))


def _greeted(slack: FakeSlack, user: str) -> bool:
    channel = "D" + user[1:]
    return any(call.args.get("channel") == channel for call in slack.calls_to("chat.postMessage"))


def test_an_unreachable_bucket_is_reported_as_degraded_and_cleared_once_it_answers(
    gcs_proxy: FaultyProxy, slack: FakeSlack, claude: FakeClaude, gcs_bucket: str
) -> None:
    outage = gcs_proxy.add_rule("", status=503)  # down from the very start
    settings = make_settings(slack, claude, gcs_memories_bucket=gcs_bucket)
    with OrionServer(settings, started_as_deployed=True) as orion:
        _check_outage_then_recovery(orion, gcs_proxy, gcs_bucket)
    assert outage.hits >= 1


def test_a_bucket_that_does_not_exist_is_degraded_with_that_reason_until_it_is_created(
    slack: FakeSlack, claude: FakeClaude, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    missing = f"{gcs_bucket}-misspelt"
    settings = make_settings(slack, claude, gcs_memories_bucket=missing)
    with OrionServer(settings, started_as_deployed=True) as orion:
        [down] = orion.wait_logged(log_events.STORE_UNAVAILABLE)
        assert "BucketNotFound" in down["exception"] and missing in down["exception"]
        response = readyz(orion)
        assert response.status_code == 200 and response.json()["degraded"] is True
        storage = response.json()["checks"]["storage"]
        assert storage == {
            "ok": False,
            "state": "bucket_missing",
            "backend": "gcs",
            "breaker": "open",
        }
        assert (
            "storage: the bucket GCS_MEMORIES_BUCKET names does not exist"
            in response.json()["reasons"]
        )
        assert missing not in response.text, "the public endpoint names no bucket"

        gcs_emulator.create_bucket(missing)  # an operator creates it: the probe sees it
        orion.wait_logged(log_events.STORE_RECOVERED)
        assert wait_ready(orion)["degraded"] is False


def _check_outage_then_recovery(orion: OrionServer, gcs_proxy: FaultyProxy, bucket: str) -> None:
    # The start-up check finds out, before any person does.
    [down] = orion.wait_logged(log_events.STORE_UNAVAILABLE)
    assert "event_id" not in down, "found by the check at start, not by someone's event"
    # Degraded, not unready: Orion greets and answers without memories meanwhile.
    response = readyz(orion)
    assert response.status_code == 200 and response.json()["degraded"] is True
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


def test_slack_failing_for_a_moment_at_start_is_asked_again(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    # Slack's own trouble, for a moment: the Web API client's retry handler asks again.
    slack.inject_error("auth.test", error="service_unavailable", status=503, times=1)
    settings = make_settings(slack, claude, memory_dir=memory_dir)
    with OrionServer(settings, started_as_deployed=True) as orion:
        assert wait_ready(orion)["ready"] is True
    assert len(slack.calls_to("auth.test")) == 2


def _serve(tmp_path: Path, slack_url: str, claude: FakeClaude) -> tuple[int, str, str]:
    """`orion serve` to its end: exit code, stderr, and the log (JSON lines on stdout)."""
    env = orion_env(slack_url=slack_url, claude_url=claude.url, port=free_port())
    env["MEMORY_DIR"] = str(tmp_path / "memories")
    result = run_orion_command(tmp_path, "serve", env=env)
    return result.returncode, result.stderr, result.stdout


def test_a_refused_bot_token_stops_orion_in_one_line_before_it_listens(
    tmp_path: Path, slack: FakeSlack, claude: FakeClaude
) -> None:
    slack.inject_error("auth.test", error="invalid_auth", status=200, times=None)
    code, stderr, log = _serve(tmp_path, slack.url, claude)
    assert code == 2
    assert "SLACK_BOT_TOKEN: Slack refused it (invalid_auth)" in stderr
    assert "Traceback" not in stderr + log
    assert log_events.ORION_SERVING not in log, "it never listened"
    assert not any(secret in stderr + log for secret in SECRETS)
    assert len(slack.calls_to("auth.test")) == 1, "a refused token is not asked again"


def test_slack_out_of_reach_at_start_stops_orion_in_one_line(
    tmp_path: Path, claude: FakeClaude
) -> None:
    nowhere = f"http://127.0.0.1:{free_port()}/api/"
    code, stderr, log = _serve(tmp_path, nowhere, claude)
    assert code == EXIT_UNAVAILABLE
    assert f"Slack's Web API at {nowhere} did not answer" in stderr
    assert "Traceback" not in stderr + log, "Orion stops: the cause in its words, no traceback"
    assert log_events.ORION_SERVING not in log


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
