"""The commands and exit codes docs/interface.md pins, run as an operator types them: `orion`
alone serves HTTP without an app token and Socket Mode with one, `orion serve` serves HTTP
whatever is set and listens on every interface at 8080 when `PORT` is unset, tracing without
Langfuse keys is off without a warning, and `orion memory forget` says with its exit code
whether it found nothing (3) or the store failed midway (4)."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import httpx
import pytest

from app.memory.homes import person, preferences_key
from tests.e2e.memory_bucket import Bucket
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import OrionProcess, free_port, orion_env, run_orion_command
from tests.orion_server import SIGNING_SECRET, loopback_client

USER, CHANNEL = "U0OPAL", "D0OPAL"
QUESTION = "What is the name of the staging cluster we deploy to first?"
ANSWER = "Staging is the heron cluster."
DEFAULT_PORT = 8080
APP_TOKEN = "xapp-1-A0DESIGN-0000-app-level-token"


def _ask(orion: OrionProcess, slack: FakeSlack, claude: FakeClaude) -> str:
    """A person asks in a new thread; returns the thread once Orion's answer is in it."""
    thread_ts = slack.open_assistant_thread(CHANNEL)
    claude.reply(ANSWER)
    ts = slack.add_user_message(CHANNEL, thread_ts, USER, QUESTION)
    body = json.dumps(events.user_message_in_thread(USER, CHANNEL, thread_ts, QUESTION, ts=ts))
    headers = {"Content-Type": "application/json", **events.sign(body.encode(), SIGNING_SECRET)}
    with loopback_client(timeout=30) as client:
        assert client.post(f"{orion.url}/slack/events", content=body, headers=headers).is_success
    slack.wait_for(
        lambda: [m for m in slack.bot_messages(CHANNEL, thread_ts) if m.text == ANSWER],
        timeout=60,
        what="the answer",
    )
    return thread_ts


def _orion() -> list[str]:
    """`uv run orion`: the installed entry point, with no command at all."""
    return [str(Path(sys.executable).with_name("orion"))]


def _tracing_warnings(log: str) -> list[str]:
    """What a library printed (a line that is not one of Orion's JSON lines: Langfuse and
    OpenTelemetry warn through their own loggers or `warnings`), and any line about tracing."""
    found = []
    for line in log.splitlines():
        try:
            json.loads(line)
        except ValueError:
            found.append(line)
            continue
        if any(word in line.lower() for word in ("langfuse", "opentelemetry", "tracing")):
            found.append(line)
    return found


def test_orion_alone_serves_http_without_an_app_token_and_tracing_off_warns_of_nothing(
    tmp_path: Path, slack: FakeSlack, claude: FakeClaude
) -> None:
    env = orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port())
    env["MEMORY_DIR"] = str(tmp_path / "memories")
    assert not any(name.startswith(("LANGFUSE_", "SLACK_APP_TOKEN")) for name in env)
    orion = OrionProcess(env, cwd=tmp_path, log_path=tmp_path / "orion.log", argv=_orion())
    with orion:
        _ask(orion, slack, claude)
        log = orion.log()
    assert '"mode": "http"' in log
    assert _tracing_warnings(log) == []


def test_orion_alone_with_an_app_token_answers_over_socket_mode(
    tmp_path: Path, claude: FakeClaude
) -> None:
    with FakeSlack(socket_mode=True) as slack:
        env = orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port())
        env |= {"SLACK_APP_TOKEN": APP_TOKEN, "MEMORY_DIR": str(tmp_path / "memories")}
        orion = OrionProcess(env, cwd=tmp_path, log_path=tmp_path / "orion.log", argv=_orion())
        try:
            orion.start()
            server = slack.socket_mode
            assert server is not None
            server.wait_connected(timeout=120)
            thread_ts = slack.open_assistant_thread(CHANNEL)
            claude.reply(ANSWER)
            ts = slack.add_user_message(CHANNEL, thread_ts, USER, QUESTION)
            server.send_events_api(
                events.user_message_in_thread(USER, CHANNEL, thread_ts, QUESTION, ts=ts)
            )
            slack.wait_for(
                lambda: [m for m in slack.bot_messages(CHANNEL, thread_ts) if m.text == ANSWER],
                timeout=60,
                what="the answer",
            )
        finally:
            exit_code = orion.stop()

    assert exit_code == 0, orion.log()
    assert '"mode": "socket"' in orion.log()
    [connection] = slack.calls_to("apps.connections.open")
    assert connection.headers["Authorization"] == f"Bearer {APP_TOKEN}"


def _own_address() -> str | None:
    """This machine's address on its network (no packet is sent), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") else address


def test_serve_forces_http_and_without_port_listens_on_every_interface_at_8080(
    tmp_path: Path, slack: FakeSlack, claude: FakeClaude
) -> None:
    with socket.socket() as taken:
        if taken.connect_ex(("127.0.0.1", DEFAULT_PORT)) == 0:
            pytest.skip(f"port {DEFAULT_PORT} is in use on this machine")
    env = orion_env(slack_url=slack.url, claude_url=claude.url, port=DEFAULT_PORT)
    # An app token would select Socket Mode for `orion` alone; `serve` is HTTP whatever is set.
    env |= {"MEMORY_DIR": str(tmp_path / "memories"), "SLACK_APP_TOKEN": APP_TOKEN}
    orion = OrionProcess(env, cwd=tmp_path, log_path=tmp_path / "orion.log")
    del orion.env["PORT"]  # where it is asked: 127.0.0.1:8080
    with orion:
        assert orion.url.endswith(f":{DEFAULT_PORT}")  # it answered /healthz there
        if (address := _own_address()) is not None:
            answer = httpx.get(f"http://{address}:{DEFAULT_PORT}/healthz", timeout=10)
            assert answer.status_code == 200, "not only loopback: 0.0.0.0"
        _ask(orion, slack, claude)
    assert '"mode": "http"' in orion.log()
    assert slack.calls_to("apps.connections.open") == []


def _forget(tmp_path: Path, user: str, **env: str) -> tuple[int, list[str], str]:
    result = run_orion_command(
        tmp_path, "memory", "forget", user, "--yes", env={"LOG_FORMAT": "json", **env}
    )
    said = [line for line in result.stderr.splitlines() if line]
    return result.returncode, said, result.stdout + result.stderr


def test_forget_of_someone_orion_has_nothing_of_exits_3(tmp_path: Path) -> None:
    memories = tmp_path / "memories"
    (memories / preferences_key("U0KEEP")).parent.mkdir(parents=True)
    (memories / preferences_key("U0KEEP")).write_text('{"language": "German"}')

    code, _, output = _forget(tmp_path, "U0NOBODY", MEMORY_DIR=str(memories))

    assert code == 3, output
    assert "Found nothing of U0NOBODY" in output
    assert (memories / preferences_key("U0KEEP")).read_text() == '{"language": "German"}'


def test_forget_cut_short_by_the_store_exits_4_and_running_it_again_finishes(
    tmp_path: Path,
    gcs_proxy: FaultyProxy,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
) -> None:
    bucket = Bucket(gcs_emulator, gcs_bucket)
    home = person(USER)
    keys = [preferences_key(USER), f"{home.memory_prefix}notes/launch.md"]
    for key in keys:
        bucket.write(key, "Launch on Thursday.\n" if key.endswith(".md") else '{"name": "Opal"}')
    env = {"GCS_MEMORIES_BUCKET": gcs_bucket, "STORAGE_EMULATOR_HOST": gcs_proxy.url}
    refused = gcs_proxy.add_rule("", status=503, method="DELETE")

    code, said, output = _forget(tmp_path, USER, **env)

    assert refused.hits >= 1
    assert code == 4, output
    assert len(said) == 1 and said[0].startswith("orion memory stopped — GCS_MEMORIES_BUCKET:")
    assert "run the command again" in said[0]
    assert "Traceback" not in output

    gcs_proxy.clear_rules()
    code, _, output = _forget(tmp_path, USER, **env)
    assert code == 0, output
    assert [key for key in bucket.names() if key.startswith(home.memory_prefix)] == []
