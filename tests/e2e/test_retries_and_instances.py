"""Slack retries: each event is answered once, on one instance or across two."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from tests import log_events
from tests.e2e.conversation import finished
from tests.fakes import slack_events as events
from tests.fakes._waiting import wait_until
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET, OrionServer

USER, CHANNEL = "U0DAVE", "D0DAVE"


def _post(url: str, payload: dict, retry_num: int | None = None) -> httpx.Response:
    body = json.dumps(payload).encode()
    headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
    if retry_num is not None:
        headers["X-Slack-Retry-Num"] = str(retry_num)
        headers["X-Slack-Retry-Reason"] = "http_timeout"
    return httpx.post(f"{url}/slack/events", content=body, headers=headers, timeout=10)


def test_a_retried_event_is_answered_once(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = slack.new_ts()
    claude.reply("Only once.")
    ts = slack.add_user_message(CHANNEL, thread_ts, USER, "hello")
    payload = events.user_message_in_thread(USER, CHANNEL, thread_ts, "hello", ts=ts)

    assert _post(orion.url, payload).status_code == 200
    for retry in (1, 2):
        assert _post(orion.url, payload, retry_num=retry).status_code == 200
    # All three deliveries handled to their end (each logs its end line): a duplicate
    # answer would have been posted before its delivery's line.
    orion.wait_handled(payload["event_id"], deliveries=3)
    orion.wait_idle()  # and the turn-end work the answer started
    assert finished(slack, CHANNEL, thread_ts) == ["Only once."]
    assert len(claude.calls) == 1
    assert len(orion.logged(log_events.SLACK_EVENT_DUPLICATE)) == 2


def _log_lines(instance: OrionProcess) -> list[dict[str, Any]]:
    """The instance's JSON log lines (anything else it printed is skipped)."""
    lines = []
    for raw in instance.log().splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and "message" in line:
            lines.append(line)
    return lines


def _handled(instance: OrionProcess, event_id: str) -> list[dict[str, Any]]:
    """The end line of the instance's delivery of the event, once it has logged it."""
    return [
        line
        for line in _log_lines(instance)
        if line.get("event_id") == event_id
        and line["message"] == log_events.SLACK_USER_MESSAGE_DONE
    ]


def test_two_instances_sharing_a_bucket_answer_an_event_once(
    tmp_path: Path,
    slack: FakeSlack,
    claude: FakeClaude,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
) -> None:
    shared = {"GCS_MEMORIES_BUCKET": gcs_bucket, "STORAGE_EMULATOR_HOST": gcs_emulator.url}
    instances = [
        OrionProcess(
            orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port(), **shared),
            cwd=tmp_path,
            log_path=tmp_path / f"orion-{n}.log",
        )
        for n in (1, 2)
    ]
    thread_ts = slack.new_ts()
    claude.reply("One answer from one instance.")
    ts = slack.add_user_message(CHANNEL, thread_ts, USER, "who answers?")
    payload = events.user_message_in_thread(USER, CHANNEL, thread_ts, "who answers?", ts=ts)
    with instances[0], instances[1]:
        assert _post(instances[0].url, payload).status_code == 200
        # Slack's first retry of the event reaches the other instance.
        assert _post(instances[1].url, payload, retry_num=1).status_code == 200
        # Each instance handled its delivery to the end (its end line is in its log): an
        # answer from the second would have been posted before that line.
        for instance in instances:
            wait_until(
                lambda instance=instance: _handled(instance, payload["event_id"]),
                30,
                "the delivery's end line",
            )
        assert finished(slack, CHANNEL, thread_ts) == ["One answer from one instance."]
        duplicates = [
            line
            for instance in instances
            for line in _log_lines(instance)
            if line["message"] == log_events.SLACK_EVENT_DUPLICATE
        ]
        assert [line["source"] for line in duplicates] == ["claim"]
    assert len(claude.calls) == 1
    claims = [name for name in gcs_emulator.names(gcs_bucket) if name.startswith("events/")]
    assert claims == [f"events/{payload['event_id']}"]
