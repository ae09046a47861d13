"""SIGTERM (what Cloud Run sends): answers that can finish in time finish, the others are
cut off visibly with a way to ask again, then Orion exits 0, before Cloud Run's SIGKILL.
Ctrl-C does the same; a second signal ends the process at once; and Socket Mode stops on
the first signal even while Slack keeps it waiting."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.slack.conversation.reply_stream import ASK_AGAIN_ACTION_ID, CUT_OFF_LINE
from tests import log_events
from tests.e2e.conversation import LONG_ANSWER, finished
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack, Message
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET

USER, CHANNEL = "U0ERIN", "D0ERIN"
QUESTION = "Can you outline the launch plan for the new billing page?"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_the_first_signal_lets_the_answer_in_flight_finish_and_exits_cleanly(
    tmp_path: Path, slack: FakeSlack, claude: FakeClaude, sig: int
) -> None:
    env = orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port())
    orion = OrionProcess(env, cwd=tmp_path, log_path=tmp_path / "orion.log")
    with orion:
        thread_ts = slack.new_ts()
        thinking = claude.hold()  # Claude is still thinking when the signal arrives
        claude.reply("Finished despite the shutdown.")
        ts = slack.add_user_message(CHANNEL, thread_ts, USER, "slow question")
        body = json.dumps(
            events.user_message_in_thread(USER, CHANNEL, thread_ts, "slow question", ts=ts)
        )
        headers = {"Content-Type": "application/json", **events.sign(body.encode(), SIGNING_SECRET)}
        assert (
            httpx.post(f"{orion.url}/slack/events", content=body, headers=headers).status_code
            == 200
        )
        slack.wait_for(lambda: claude.calls, timeout=60, what="the Claude request")
        orion.signal(sig)
        orion.wait_logged(log_events.ORION_STOPPING)
        thinking.set()
        exit_code = orion.wait_exit(timeout=30)

    assert exit_code == 0, orion.log()
    assert "Traceback" not in orion.log()
    answers = [m.text for m in slack.bot_messages(CHANNEL, thread_ts) if not m.streaming]
    assert answers == ["Finished despite the shutdown."]
    assert json.dumps(log_events.ORION_SHUTDOWN) in orion.log()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_socket_mode_stops_on_the_first_signal_while_slack_keeps_it_waiting(
    tmp_path: Path, socket_slack: FakeSlack, claude: FakeClaude, sig: int
) -> None:
    # Slack never answers apps.connections.open: Orion cannot get past connecting.
    gate = socket_slack.hold("apps.connections.open")
    env = orion_env(
        slack_url=socket_slack.url,
        claude_url=claude.url,
        port=free_port(),
        SLACK_APP_TOKEN="xapp-1-A0TEST-0000-test",
        MEMORY_DIR=str(tmp_path / "memories"),
    )
    orion = OrionProcess(env, cwd=tmp_path, log_path=tmp_path / "orion.log", command="socket")
    try:
        orion.start()
        orion.wait_logged(log_events.ORION_SOCKET_MODE_CONNECTING)
        exit_code = orion.stop(sig=sig)
    finally:
        gate.set()

    assert exit_code == 0, orion.log()
    assert "Traceback" not in orion.log()
    assert json.dumps(log_events.ORION_SHUTDOWN) in orion.log()


def test_a_second_signal_stops_at_once(
    tmp_path: Path, slack: FakeSlack, claude: FakeClaude
) -> None:
    env = orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port())
    orion = OrionProcess(env, cwd=tmp_path, log_path=tmp_path / "orion.log")
    with orion:
        thread_ts = slack.new_ts()
        claude.delay(60)  # an answer in flight that the graceful stop would wait for
        claude.reply("Too late.")
        ts = slack.add_user_message(CHANNEL, thread_ts, USER, "slow question")
        body = json.dumps(
            events.user_message_in_thread(USER, CHANNEL, thread_ts, "slow question", ts=ts)
        )
        headers = {"Content-Type": "application/json", **events.sign(body.encode(), SIGNING_SECRET)}
        httpx.post(f"{orion.url}/slack/events", content=body, headers=headers)
        slack.wait_for(lambda: claude.calls, timeout=60, what="the Claude request")
        orion.signal(signal.SIGTERM)
        orion.wait_logged(log_events.ORION_STOPPING)
        exit_code = orion.stop(sig=signal.SIGINT)  # a person pressing Ctrl-C again

    assert exit_code == 128 + signal.SIGINT
    assert json.dumps(log_events.ORION_STOPPED_AT_ONCE) in orion.log()
    assert not [m for m in slack.bot_messages(CHANNEL, thread_ts) if m.text == "Too late."]


def _post_to(url: str, body: bytes, content_type: str) -> httpx.Response:
    headers = {"Content-Type": content_type, **events.sign(body, SIGNING_SECRET)}
    return httpx.post(f"{url}/slack/events", content=body, headers=headers, timeout=30)


def _ask_again_button(message: Message) -> dict[str, Any]:
    [button] = [
        element
        for block in message.blocks
        if block.get("type") == "actions"
        for element in block.get("elements", [])
        if element.get("action_id") == ASK_AGAIN_ACTION_ID
    ]
    return button


@pytest.mark.parametrize("experience", ["assistant", "agent"])
def test_a_restart_mid_answer_cuts_it_off_visibly_and_another_instance_asks_again_once(
    tmp_path: Path,
    claude: FakeClaude,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
    experience: str,
) -> None:
    """SIGTERM while an answer streams (Cloud Run's deploy or scale-in, SIGKILL 10 s later):
    the answer ends where it was with a line that says so and a button; nothing is left
    streaming or "thinking"; the process exits by itself before the SIGKILL. The click lands
    on another instance, which answers the same question in the same thread, once."""
    shared = {
        "GCS_MEMORIES_BUCKET": gcs_bucket,
        "STORAGE_EMULATOR_HOST": gcs_emulator.url,
        "SLACK_EXPERIENCE": experience,
    }
    agent_view = experience == "agent"
    with FakeSlack(agent_view=agent_view) as slack:

        def instance(n: int) -> OrionProcess:
            env = orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port(), **shared)
            return OrionProcess(env, cwd=tmp_path, log_path=tmp_path / f"orion-{n}.log")

        restarting = instance(1)
        with restarting:
            # The first words go out; the rest only after the restart has cut the answer off.
            rest = threading.Event()
            claude.reply(LONG_ANSWER, held=rest)
            if agent_view:
                question_ts = slack.add_user_message(CHANNEL, None, USER, QUESTION)
                thread_ts = question_ts
                payload = events.top_level_dm(USER, CHANNEL, QUESTION, ts=question_ts)
            else:
                thread_ts = slack.open_assistant_thread(CHANNEL)
                question_ts = slack.add_user_message(CHANNEL, thread_ts, USER, QUESTION)
                payload = events.user_message_in_thread(
                    USER, CHANNEL, thread_ts, QUESTION, ts=question_ts
                )
            response = _post_to(restarting.url, events.json_body(payload), "application/json")
            assert response.status_code == 200
            slack.wait_for(
                lambda: [m for m in slack.bot_messages(CHANNEL, thread_ts) if m.text],
                timeout=30,
                what="the first part of the answer",
            )
            restarting.signal(signal.SIGTERM)
            restarting.wait_logged(log_events.ORION_STOPPING)
            # From the signal on, no new event is taken: Slack delivers it elsewhere.
            late = events.json_body(events.top_level_dm(USER, CHANNEL, "anyone there?"))
            with contextlib.suppress(httpx.TransportError):
                assert _post_to(restarting.url, late, "application/json").status_code == 503
            # Gone by itself before Cloud Run's SIGKILL (10 s after SIGTERM).
            exit_code = restarting.wait_exit(timeout=30)
            rest.set()
        assert exit_code == 0, restarting.log()
        assert json.dumps(log_events.SLACK_TURN_CUT_OFF) in restarting.log()

        [cut_off] = slack.bot_messages(CHANNEL, thread_ts)
        assert not cut_off.streaming, "the stream is closed"
        shown, line = cut_off.text.rsplit("\n\n", 1)
        assert LONG_ANSWER.startswith(shown) and shown != LONG_ANSWER
        assert line == f"_{CUT_OFF_LINE}_"
        button = _ask_again_button(cut_off)
        assert button["value"] == question_ts
        if agent_view:
            session = slack.session(CHANNEL, thread_ts)
            assert session is not None and session.statuses[-1] == "active"
        assert len(claude.requests) == 1, "no summary of the cut-off turn"

        # Another instance takes the click (the first is gone), and answers once.
        claude.reply("Here is the whole plan.")
        click = events.form_body(
            events.block_actions(
                USER,
                CHANNEL,
                cut_off.ts,
                ASK_AGAIN_ACTION_ID,
                button["value"],
                thread_ts=thread_ts,
                message=cut_off.to_api(),
            )
        )
        form = "application/x-www-form-urlencoded"
        with instance(2) as next_instance:
            assert _post_to(next_instance.url, click, form).status_code == 200
            slack.wait_for(
                lambda: "Here is the whole plan." in finished(slack, CHANNEL, thread_ts),
                timeout=30,
                what="the answer asked again",
            )
            assert _post_to(next_instance.url, click, form).status_code == 200
            next_instance.wait_logged(log_events.SLACK_ASK_AGAIN_ALREADY_ASKED)
        asked_again = claude.requests[-1]
        assert last_user_text(asked_again) == QUESTION, "the same question"
        assert finished(slack, CHANNEL, thread_ts).count("Here is the whole plan.") == 1
        if agent_view:
            session = slack.session(CHANNEL, thread_ts)
            assert session is not None and session.statuses[-1] == "active"
