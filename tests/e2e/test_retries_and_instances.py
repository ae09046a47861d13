"""Slack retries and Stops: each event is answered once, and a Stop ends the answer, on
one instance or across two."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx

from app.config import DEFAULT_SUMMARY_MODEL
from app.slack.agent_view import STOPPED_CONFIRMATION
from tests import log_events
from tests.e2e.channels import ANA, PUBLIC, set_up_channels
from tests.e2e.conversation import LONG_ANSWER, finished
from tests.fakes import slack_events as events
from tests.fakes._waiting import PROCESS_PATIENCE_S, wait_until
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET, OrionServer

USER, CHANNEL = "U0DAVE", "D0DAVE"
QUESTION = "Can you outline the launch plan for the new billing page?"


def _post(url: str, payload: dict, retry_num: int | None = None) -> httpx.Response:
    body = json.dumps(payload).encode()
    headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
    if retry_num is not None:
        headers["X-Slack-Retry-Num"] = str(retry_num)
        headers["X-Slack-Retry-Reason"] = "http_timeout"
    return httpx.post(f"{url}/slack/events", content=body, headers=headers, timeout=30)


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


def _handled(
    instance: OrionProcess, event_id: str, done: str = log_events.SLACK_USER_MESSAGE_DONE
) -> list[dict[str, Any]]:
    """The end line of the instance's delivery of the event, once it has logged it."""
    return [
        line
        for line in _log_lines(instance)
        if line.get("event_id") == event_id and line["message"] == done
    ]


def test_two_instances_sharing_a_bucket_answer_an_event_once_in_a_dm_and_in_a_channel(
    tmp_path: Path,
    slack: FakeSlack,
    claude: FakeClaude,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
) -> None:
    """A message in a DM, then a mention in a channel, each retried by Slack on the other
    instance: one answer each, one conversation record, one claim."""
    shared = {"GCS_MEMORIES_BUCKET": gcs_bucket, "STORAGE_EMULATOR_HOST": gcs_emulator.url}
    instances = [
        OrionProcess(
            orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port(), **shared),
            cwd=tmp_path,
            log_path=tmp_path / f"orion-{n}.log",
        )
        for n in (1, 2)
    ]
    set_up_channels(slack)
    thread_ts = slack.new_ts()
    ts = slack.add_user_message(CHANNEL, thread_ts, USER, "who answers?")
    message = events.user_message_in_thread(USER, CHANNEL, thread_ts, "who answers?", ts=ts)
    mention_ts = slack.add_user_message(PUBLIC, None, ANA, "<@UBOT> who answers?")
    mention = events.app_mention(ANA, PUBLIC, "<@UBOT> who answers?", ts=mention_ts)
    with instances[0], instances[1]:
        claude.reply("One answer from one instance.")
        assert _post(instances[0].url, message).status_code == 200
        # Slack's first retry of the event reaches the other instance.
        assert _post(instances[1].url, message, retry_num=1).status_code == 200
        # Each instance handled its delivery to the end (its end line is in its log): an
        # answer from the second would have been posted before that line.
        for instance in instances:
            wait_until(
                lambda instance=instance: _handled(instance, message["event_id"]),
                PROCESS_PATIENCE_S,
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

        claude.reply("One answer for the channel.")
        assert _post(instances[0].url, mention).status_code == 200
        assert _post(instances[1].url, mention, retry_num=1).status_code == 200
        for instance in instances:
            wait_until(
                lambda instance=instance: _handled(
                    instance, mention["event_id"], log_events.SLACK_APP_MENTION_DONE
                ),
                PROCESS_PATIENCE_S,
                "the mention's end line",
            )
        assert [m.text for m in slack.bot_messages(PUBLIC, mention_ts)] == [
            "One answer for the channel."
        ]
    assert len([r for r in claude.requests if r["model"] != DEFAULT_SUMMARY_MODEL]) == 2
    claims = [name for name in gcs_emulator.names(gcs_bucket) if name.startswith("events/")]
    assert sorted(claims) == sorted(f"events/{e['event_id']}" for e in (message, mention))


def test_a_stop_that_reaches_the_other_instance_ends_the_answer_where_slack_stopped_it(
    tmp_path: Path, claude: FakeClaude, gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    """agent_view, two instances: the Stop event lands on the one not answering. Slack stops
    the stream itself; the answering instance learns it from Slack's refusal of its next
    stream call, and leaves Claude's stream there."""
    shared = {
        "GCS_MEMORIES_BUCKET": gcs_bucket,
        "STORAGE_EMULATOR_HOST": gcs_emulator.url,
        "SLACK_EXPERIENCE": "agent",
    }
    with FakeSlack(agent_view=True) as slack:
        answering, other = (
            OrionProcess(
                orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port(), **shared),
                cwd=tmp_path,
                log_path=tmp_path / f"orion-{n}.log",
            )
            for n in (1, 2)
        )
        with answering, other:
            # The first words go out; the rest waits until the Stop has reached Slack.
            rest = threading.Event()
            claude.reply(LONG_ANSWER, held=rest, chunk_delay=1.0)  # then a piece a second
            ts = slack.add_user_message(CHANNEL, None, USER, QUESTION)
            payload = events.top_level_dm(USER, CHANNEL, QUESTION, ts=ts)
            assert _post(answering.url, payload).status_code == 200
            slack.wait_for(
                lambda: [m for m in slack.bot_messages(CHANNEL, ts) if m.text],
                timeout=30,
                what="the first part of the answer",
            )

            stopped = slack.stop_streams(CHANNEL, ts)  # what Slack does on Stop
            stop = events.agent_session_stopped(USER, CHANNEL, ts, stopped)
            assert _post(other.url, stop).status_code == 200
            rest.set()  # Claude writes on: Slack refuses the next words
            wait_until(
                lambda: _logged(answering, log_events.SLACK_AGENT_MESSAGE_DONE),
                30,
                "the answering instance's end of the turn",
            )
            wait_until(
                lambda: _logged(other, log_events.SLACK_AGENT_SESSION_STOPPED_DONE),
                30,
                "the Stop handled",
            )

        # What was shown stays as Slack stopped it: never rewritten with the whole answer.
        shown, confirmation = slack.bot_messages(CHANNEL, ts)
        assert shown.ts == stopped[0] and not shown.streaming
        assert shown.text and LONG_ANSWER.startswith(shown.text) and shown.text != LONG_ANSWER
        assert slack.calls_to("chat.update") == []
        # The instance that got the Stop confirmed it; the session ends active.
        assert confirmation.text == STOPPED_CONFIRMATION
        session = slack.session(CHANNEL, ts)
        assert session is not None and session.statuses[-1] == "active"
    # Claude's stream was left before its end, and nothing was learned from the turn.
    [answer_stream] = claude.wait_for(lambda: claude.stream_ends, what="the stream's end")
    assert answer_stream.complete is False
    assert len(claude.requests) == 1, "no summary of the stopped turn"
    [turn] = _logged(answering, log_events.SLACK_TURN_STOPPED)
    assert turn["written_chars"] > len(shown.text), "Claude had written more than was shown"
    # (Its end only settles the erasure guard for what the turn wrote.)
    ended = [
        (line["written"], line.get("reason"))
        for line in _logged(answering, log_events.MEMORY_AFTER_TURN)
    ]
    assert ended in ([], [(False, "unfinished")])


def _logged(instance: OrionProcess, message: str) -> list[dict[str, Any]]:
    return [line for line in _log_lines(instance) if line["message"] == message]
