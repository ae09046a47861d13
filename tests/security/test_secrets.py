"""Secrets a person pastes, or their memory holds, go nowhere: not into a memory file's
name, not to Langfuse; and erasing a person erases their Langfuse traces.

Through signed events: Orion over HTTP, the fake Slack and Claude, memories in the GCS
emulator, spans captured as Langfuse's client exports them (tests/conftest.py), and the
fake Langfuse API for the traces Langfuse holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.memory.homes import person, preferences_key
from app.memory.scopes import global_context_key
from app.slack.home import controls
from app.slack.home.memory_view import ACTION_FORGET_EVERYTHING
from tests import log_events
from tests.e2e import conversation
from tests.e2e.conversation import main_requests, result_text, system_text, tool_results
from tests.e2e.home import click, open_home, shown
from tests.e2e.memory_bucket import Bucket
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.langfuse_api import FakeLangfuse
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import run_orion_command
from tests.orion_server import OrionServer
from tests.span_log import SpanLog

USER, DM = "U0SECRET", "D0SECRET"
OTHER, OTHER_DM = "U0BYSTANDER", "D0BYSTANDER"

GITHUB_PAT = "ghp_" + "Q7w9E2r4T6y8U1i3O5p7" * 2
STRIPE_KEY = "sk_live_51H8qRsTuVwXyZ0123456789"
DB_URL_PASSWORD = "s3cr3t-Db-pw"
SPLIT_SLACK_TOKEN = "xoxb-12\u200b34-5678901234-AbCdEfGhIjKlMn"
# Kept in memory before redaction existed (written straight into the bucket).
REMEMBERED_AWS_KEY = "AKIAIOSFODNN7SEEDED1"
ORG_WEBHOOK = "https://hooks.slack.com/services/T0ORGXXXX/B0ORGYYYY/OrgWebhookSecret0123"


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer]) -> OrionServer:
    return orion_on_bucket()


def _ask(orion: OrionServer, slack: FakeSlack, user: str, dm: str, text: str, answer: str) -> str:
    thread_ts = slack.new_ts()
    conversation.post_user_message(orion, slack, user, dm, thread_ts, text)
    conversation.wait_for_answer(slack, dm, thread_ts, answer)
    return thread_ts


# --- secrets in memory file names -----------------------------------------------------------


def test_a_memory_file_named_after_a_secret_is_refused_and_its_name_is_kept_nowhere(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    notes = f"/memories/users/{USER}/notes.md"
    claude.reply_tool_use(
        "memory",
        {
            "command": "create",
            "path": f"/memories/users/{USER}/tokens/{GITHUB_PAT}.md",
            "file_text": "the GitHub token for CI",
        },
    )
    claude.reply_tool_use("memory", {"command": "create", "path": notes, "file_text": "CI: GitHub"})
    claude.reply_tool_use(
        "memory",
        {
            "command": "rename",
            "old_path": notes,
            "new_path": f"/memories/users/{USER}/password=hunter2-prod.md",
        },
    )
    claude.reply("Noted, without the token.")
    _ask(orion, slack, USER, DM, f"Remember my CI token {GITHUB_PAT}", "Noted, without the token.")

    refused_create, created, refused_rename = [
        result for request in main_requests(claude, orion) for result in tool_results(request)
    ]
    for refused in (refused_create, refused_rename):
        assert refused.get("is_error") is True
        assert "looks like a secret" in result_text(refused)
    assert GITHUB_PAT not in result_text(refused_create)
    assert "hunter2-prod" not in result_text(refused_rename)
    assert result_text(created) == f"File created successfully at: {notes}"
    names = bucket.names()
    assert f"{person(USER).memory_prefix}notes.md" in names, "the file stays where it was"
    assert [name for name in names if GITHUB_PAT in name or "hunter2" in name] == []
    orion.wait_idle()
    logs = orion.log_stream.getvalue()
    assert log_events.TOOL_MEMORY_CREATE in logs
    assert GITHUB_PAT not in logs and "hunter2-prod" not in logs


# --- a password as Slack sends it --------------------------------------------------------


def test_a_password_holding_slack_entities_is_read_as_typed_and_kept_nowhere(
    orion_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
) -> None:
    """Slack sends `&`, `<` and `>` as entities: redacting the text as it arrives kept the
    password's tail after the first one (`password: P&amp;[redacted]ss&lt;w0rd&gt;…`)."""
    orion = orion_on_bucket(memory_load_timeout_s=10.0)  # memory there, however busy the machine
    typed = "Remember the staging login. password: P&ss<w0rd>Tail9 thanks"
    notes = f"/memories/users/{USER}/staging.md"
    claude.reply_tool_use(
        "memory",
        {"command": "create", "path": notes, "file_text": "staging password: P&ss<w0rd>Tail9\n"},
    )
    claude.reply("Noted, without the password.")
    thread_ts = slack.new_ts()
    ts = slack.add_user_message(DM, thread_ts, USER, events.as_slack_sends(typed))
    payload = events.user_message_in_thread(
        USER, DM, thread_ts, events.as_slack_sends(typed), ts=ts
    )
    assert orion.post_event(payload).status_code == 200
    conversation.wait_for_answer(slack, DM, thread_ts, "Noted, without the password.", timeout=15)
    orion.wait_idle()

    # Claude reads what the person typed, not Slack's entities...
    [first, *_] = main_requests(claude, orion)
    assert typed in json.dumps(first["messages"], ensure_ascii=False)
    assert "&amp;" not in json.dumps(first["messages"])
    # ...and nothing of the password is kept: not in memory, not in the conversation's record.
    assert (
        bucket.read(f"{person(USER).memory_prefix}staging.md") == "staging password: [redacted]\n"
    )
    kept = "\n".join(bucket.read(name) or "" for name in bucket.names())
    assert "w0rd" not in kept and "Tail9" not in kept
    assert "password: [redacted] thanks" in kept


# --- Langfuse is masked ---------------------------------------------------------------------


def test_pasted_and_remembered_secrets_never_reach_langfuse(
    spans: SpanLog, orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    bucket.write(
        preferences_key(USER),
        json.dumps({"name": "Sam", "deploy_key": f"aws {REMEMBERED_AWS_KEY}"}),
    )
    bucket.write(global_context_key(), f"Acme posts releases to {ORG_WEBHOOK}\n")
    pasted = (
        f"My GitHub token is {GITHUB_PAT}, Stripe {STRIPE_KEY}, the database is "
        f"postgres://app:{DB_URL_PASSWORD}@db.internal/app and the bot {SPLIT_SLACK_TOKEN}."
    )
    claude.reply_tool_use(
        "memory",
        {
            "command": "create",
            "path": f"/memories/users/{USER}/{STRIPE_KEY}.md",
            "file_text": f"Stripe: {STRIPE_KEY}",
        },
    )
    echo = f"Please rotate {GITHUB_PAT} now; I kept none of it."
    claude.reply(echo)
    _ask(orion, slack, USER, DM, pasted, echo)
    slack.wait_for(lambda: spans.named("slack.user_message"), what="the turn's trace")
    orion.wait_idle()

    # The secrets did reach Claude (the memory was injected, the message sent)...
    [first, *_] = main_requests(claude, orion)
    assert REMEMBERED_AWS_KEY in system_text(first) and ORG_WEBHOOK in system_text(first)
    assert STRIPE_KEY in json.dumps(first["messages"])
    # ...and were traced, masked, into the generation's input and output and the tool span.
    [generation, *_] = spans.named("agent.claude")
    traced_input = str(spans.attributes(generation)["langfuse.observation.input"])
    assert "[redacted]" in traced_input and "Sam" in traced_input
    assert spans.named("tool.memory.create")
    exported = spans.text()
    for secret in (
        GITHUB_PAT,
        STRIPE_KEY,
        DB_URL_PASSWORD,
        SPLIT_SLACK_TOKEN,
        SPLIT_SLACK_TOKEN.replace("\u200b", ""),
        REMEMBERED_AWS_KEY,
        ORG_WEBHOOK,
        "OrgWebhookSecret0123",
    ):
        assert secret not in exported, secret
        assert json.dumps(secret)[1:-1] not in exported, secret  # nor JSON-escaped


# --- erasure reaches Langfuse ---------------------------------------------------------------


def _traced_turns(
    spans: SpanLog, orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> dict[str, str | None]:
    """A traced turn each for the person and a bystander, held by the fake Langfuse."""
    for user, dm in ((USER, DM), (OTHER, OTHER_DM)):
        claude.reply(f"Hello {user}.")
        _ask(orion, slack, user, dm, "Hello, I'm here for the trace.", f"Hello {user}.")
    orion.wait_idle()
    spans.send_to_langfuse()
    langfuse = spans.langfuse()
    held = langfuse.traces()
    assert USER in held.values() and OTHER in held.values()
    return held


def test_forget_everything_deletes_the_persons_langfuse_traces_only(
    spans: SpanLog, orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    before = _traced_turns(spans, orion, slack, claude)
    bucket.write(preferences_key(USER), json.dumps({"name": "Sam"}))
    theirs = {trace for trace, user in before.items() if user == USER}

    after = click(orion, slack, USER, open_home(orion, slack, USER, DM), ACTION_FORGET_EVERYTHING)

    assert controls.FORGOT_EVERYTHING in shown(after)
    [line] = orion.wait_logged(log_events.TRACING_FORGET)
    assert line["traces"] == len(theirs) and line["user"] == USER
    left = spans.langfuse().traces()
    assert USER not in left.values()
    assert left == {trace: user for trace, user in before.items() if user != USER}


def test_forget_everything_finishes_when_langfuse_is_down(
    spans: SpanLog, orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    _traced_turns(spans, orion, slack, claude)
    bucket.write(preferences_key(USER), json.dumps({"name": "Sam"}))
    spans.langfuse().failing_status = 503

    after = click(orion, slack, USER, open_home(orion, slack, USER, DM), ACTION_FORGET_EVERYTHING)

    assert controls.FORGOT_EVERYTHING in shown(after)
    assert bucket.read(preferences_key(USER)) is None
    [line] = orion.wait_logged(log_events.TRACING_FORGET_FAILED)
    assert line["exception"].startswith("Traceback (most recent call last):")
    assert line["user"] == USER and line.get("trace_id")
    assert orion.http.get("/healthz").status_code == 200


@pytest.fixture
def langfuse(fake_langfuse: FakeLangfuse) -> Iterator[FakeLangfuse]:
    fake_langfuse.clear()
    yield fake_langfuse
    fake_langfuse.clear()


def test_the_operators_forget_command_deletes_the_persons_langfuse_traces(
    tmp_path: Path, langfuse: FakeLangfuse
) -> None:
    memories = tmp_path / "memories"
    (memories / preferences_key(USER)).parent.mkdir(parents=True)
    (memories / preferences_key(USER)).write_text('{"name": "Sam"}')
    for n in range(3):  # three traces of the person, one of two observations
        langfuse.record_observation(f"obs-{n}", f"trace-{n}", USER)
    langfuse.record_observation("obs-0b", "trace-0", USER, "GENERATION")
    langfuse.record_observation("obs-other", "trace-other", OTHER)
    env = {
        "SLACK_BOT_TOKEN": "xoxb-cli-test",
        "SLACK_API_URL": "http://127.0.0.1:9/api/",  # no Slack: nothing needs it
        "ANTHROPIC_API_KEY": "sk-ant-cli-test",
        "MEMORY_DIR": str(memories),
        "LOG_FORMAT": "json",
        "LANGFUSE_PUBLIC_KEY": "pk-lf-cli-test",
        "LANGFUSE_SECRET_KEY": "sk-lf-cli-test",
        "LANGFUSE_BASE_URL": langfuse.url,
    }
    done = run_orion_command(tmp_path, "memory", "forget", USER, "--yes", env=env)

    assert done.returncode == 0, done.stderr
    assert "Deleted 3 Langfuse traces." in done.stdout
    assert langfuse.traces() == {"trace-other": OTHER}
    assert not (memories / preferences_key(USER)).exists()
