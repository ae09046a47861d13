"""Bad input is rejected or ignored without losing anything; secrets never leak."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from langfuse import Langfuse
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from app.observability import tracing
from tests.e2e.conversation import finished, main_requests, post_user_message
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, message_text
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import SIGNING_SECRET, OrionServer, make_settings
from tests.span_log import SpanLog

USER, CHANNEL = "U0GRACE", "D0GRACE"


def _post_raw(orion: OrionServer, body: bytes) -> httpx.Response:
    headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
    return orion.http.post("/slack/events", content=body, headers=headers)


def test_malformed_and_unknown_events_are_acked_and_the_service_stays_healthy(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    unknown = events.event_callback({"type": "reaction_added", "user": USER, "reaction": "+1"})
    assert _post_raw(orion, json.dumps(unknown).encode()).status_code == 200
    not_json = _post_raw(orion, b"{this is not json")
    assert not_json.status_code < 500
    no_event = _post_raw(orion, json.dumps({"type": "event_callback"}).encode())
    assert no_event.status_code < 500

    assert orion.http.get("/healthz").status_code == 200
    thread_ts = slack.new_ts()
    claude.reply("Still here.")
    post_user_message(orion, slack, USER, CHANNEL, thread_ts, "hi")
    slack.wait_for(lambda: finished(slack, CHANNEL, thread_ts) == ["Still here."], what="an answer")


def test_an_oversized_message_is_trimmed_with_a_note(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    thread_ts = slack.new_ts()
    huge = "lorem ipsum " * 10_000  # 120,000 characters
    claude.reply("I read the start of it.")
    post_user_message(orion, slack, USER, CHANNEL, thread_ts, huge)
    slack.wait_for(lambda: finished(slack, CHANNEL, thread_ts), what="an answer")

    [answer_request] = main_requests(claude, orion)
    sent = message_text(answer_request["messages"][-1])
    assert len(sent) < 20_000
    assert "[Message trimmed" in sent


def test_a_whole_conversation_leaks_no_secret_to_logs_or_traces(
    slack: FakeSlack, claude: FakeClaude, tmp_path: Path
) -> None:
    secrets = {
        "slack_bot_token": "xoxb-RECOGNISABLE-bot-token-7f3a",
        "slack_signing_secret": "RECOGNISABLE-signing-secret-91c2",
        "anthropic_api_key": "sk-ant-RECOGNISABLE-api-key-5d8e",
        "langfuse_public_key": "pk-lf-RECOGNISABLE-public-22aa",
        "langfuse_secret_key": "sk-lf-RECOGNISABLE-secret-33bb",
    }
    # Langfuse keeps one set of resources per public key: this offline client's in-memory
    # exporter is what Orion's own client (built from the settings below) exports to.
    exporter = InMemorySpanExporter()
    capture = Langfuse(
        public_key=secrets["langfuse_public_key"],
        secret_key=secrets["langfuse_secret_key"],
        base_url="http://127.0.0.1:9",
        tracer_provider=TracerProvider(),
        span_exporter=exporter,
        mask=tracing.mask_secrets,  # what configure_tracing installs in production
    )
    spans = SpanLog(capture, exporter)
    settings = make_settings(
        slack, claude, memory_dir=tmp_path, langfuse_base_url="http://127.0.0.1:9", **secrets
    )
    with OrionServer(settings) as orion:
        thread_ts = slack.new_ts()
        body = json.dumps(events.assistant_thread_started(USER, CHANNEL, thread_ts)).encode()
        headers = {"Content-Type": "application/json"}
        headers.update(events.sign(body, secrets["slack_signing_secret"]))
        assert orion.http.post("/slack/events", content=body, headers=headers).status_code == 200
        slack.wait_for(lambda: slack.bot_messages(CHANNEL, thread_ts), what="the greeting")

        claude.reply_tool_use(
            "memory",
            {"command": "create", "path": f"/memories/users/{USER}/notes.md", "file_text": "x"},
        )
        claude.fail(529, "overloaded_error", f"echoing {secrets['anthropic_api_key']}")
        text = "my token is " + secrets["slack_bot_token"]  # a person pasting a secret
        ts = slack.add_user_message(CHANNEL, thread_ts, USER, text)
        body = json.dumps(
            events.user_message_in_thread(USER, CHANNEL, thread_ts, text, ts=ts)
        ).encode()
        headers = {"Content-Type": "application/json"}
        headers.update(events.sign(body, secrets["slack_signing_secret"]))
        orion.http.post("/slack/events", content=body, headers=headers)
        slack.wait_for(lambda: len(finished(slack, CHANNEL, thread_ts)) >= 2, what="the apology")
        logs = orion.log_stream.getvalue()
    tracing.set_client(None)

    exported = spans.text()
    assert "slack.user_message" in exported and logs
    for name, value in secrets.items():
        assert value not in logs, f"{name} appears in a log line"
        assert value not in exported, f"{name} appears in a span"
    for message in slack.bot_messages(CHANNEL, thread_ts):
        assert secrets["anthropic_api_key"] not in message.text
