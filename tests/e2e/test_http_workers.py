"""Several worker processes on one instance (`HTTP_WORKERS`, app/http_workers.py).

The kernel hands each connection to whichever worker takes it, so a Stop can reach another
worker than the one answering the conversation. Two Orion servers sharing a siblings
directory stand for two workers, each Stop posted to the one that is not answering (a
real `orion serve` cannot be told which worker takes a request); then `orion serve` with
two workers on a GCS bucket, as deployed: its /readyz answers for every worker (the
startup probe reaches one), it answers, a Stop is confirmed wherever it
lands, copies of one event are answered once, SIGTERM stops them all, a worker that dies
is replaced, a second signal ends a draining worker at once, workers outlive no
supervisor, and workers that cannot start stop the supervisor with exit 2.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from app.config import DEFAULT_SUMMARY_MODEL as SUMMARY_MODEL
from app.config import EXIT_PROBLEM
from app.memory.scopes import user_preferences_key
from app.runtime.worker_siblings import WorkerSiblings
from tests import log_events
from tests.e2e.conversation import LONG_ANSWER, finished
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes._waiting import wait_until
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack, Message
from tests.orion_process import REPO, OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET, OrionServer, make_settings

USER, CHANNEL = "U0WREN", "D0WREN"
QUESTION = "Can you draft the rollout plan for the new search page?"
STOPPED = "Stopped. Ask again whenever you're ready."
PREFERENCES = {"name": "Wren", "response_style": "short answers"}
# A fresh worker builds its clients in the background, on a machine shared with the tests.
PROCESS_WAIT_S = 30.0


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(agent_view=True) as fake:
        yield fake


@pytest.fixture
def workers(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path, tmp_path: Path
) -> Iterator[tuple[OrionServer, OrionServer]]:
    """Two workers of one instance: their own servers and processes' state, one store."""
    siblings = tmp_path / "siblings"
    siblings.mkdir(mode=0o700)
    settings = make_settings(slack, claude, memory_dir=memory_dir, slack_experience="agent")
    with (
        OrionServer(settings, worker_siblings=WorkerSiblings(siblings, name="a")) as first,
        OrionServer(settings, worker_siblings=WorkerSiblings(siblings, name="b")) as second,
    ):
        yield first, second


def _start_conversation(
    orion: OrionServer | OrionProcess, slack: FakeSlack, question: str = QUESTION
) -> str:
    ts = slack.add_user_message(CHANNEL, None, USER, question)
    assert _post(orion.url, events.top_level_dm(USER, CHANNEL, question, ts=ts)) == 200
    return ts


def _answer_slowly(claude: FakeClaude) -> None:
    """The question about the rollout gets a long answer, a piece a second; everything else
    (other questions, the turn-end summaries) Claude echoes: '(fake claude) you said: …'."""

    def respond(body: dict[str, Any]) -> script.ScriptItem | None:
        if QUESTION in last_user_text(body) and body["model"] != SUMMARY_MODEL:
            return script.text(LONG_ANSWER, chunk_delay=1.0)
        return None

    claude.responder = respond


def _echoed(question: str) -> str:
    return f"(fake claude) you said: {question}"


def _post(url: str, payload: dict[str, Any]) -> int:
    body = events.json_body(payload)
    headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
    return httpx.post(f"{url}/slack/events", content=body, headers=headers).status_code


def _statuses(slack: FakeSlack, thread_ts: str) -> list[str]:
    session = slack.session(CHANNEL, thread_ts)
    return session.statuses if session is not None else []


def _streamed(slack: FakeSlack, thread_ts: str) -> list[Message]:
    return [m for m in slack.bot_messages(CHANNEL, thread_ts) if m.text]


def _two(messages: list[Message]) -> list[Message] | None:
    return messages if len(messages) == 2 else None


def test_a_stop_that_reaches_another_worker_stops_the_answer_where_it_runs(
    workers: tuple[OrionServer, OrionServer], slack: FakeSlack, claude: FakeClaude
) -> None:
    answering, other = workers
    claude.reply(LONG_ANSWER, chunk_delay=1.0)  # six pieces, a second apart
    thread_ts = _start_conversation(answering, slack)
    [streaming] = slack.wait_for(lambda: _streamed(slack, thread_ts), what="the first words")

    stop = events.agent_session_stopped(USER, CHANNEL, thread_ts, [streaming.ts])
    assert _post(other.url, stop) == 200
    shown, confirmation = slack.wait_for(
        lambda: _two(slack.bot_messages(CHANNEL, thread_ts)), what="the stop's confirmation"
    )
    slack.wait_for(lambda: _statuses(slack, thread_ts)[-1:] == ["active"])

    # As when the Stop reaches the worker answering: what was shown stays, one line
    # confirms, the session is active once, and nothing is learned from the stopped turn.
    assert shown.text and shown.text != LONG_ANSWER and LONG_ANSWER.startswith(shown.text)
    assert confirmation.text == STOPPED
    assert _statuses(slack, thread_ts) == ["processing", "active"]
    # Logging is process-wide, so both servers log where the one started last does.
    log = other
    [told] = log.logged(log_events.SLACK_AGENT_SESSION_STOPPED_TURN)
    assert (told["running_here"], told["stopped"]) == (False, "by_a_sibling")
    assert log.logged(log_events.SLACK_TURN_STOPPED_FOR_A_SIBLING)
    log.wait_logged(log_events.SLACK_TURN_STOPPED)
    slack.wait_for(lambda: log.logged(log_events.SLACK_AGENT_MESSAGE_DONE))
    assert not log.logged(log_events.MEMORY_AFTER_TURN)
    assert len(claude.requests) == 1


def test_a_stop_for_an_answer_already_finished_sets_the_session_active_from_either_worker(
    workers: tuple[OrionServer, OrionServer], slack: FakeSlack, claude: FakeClaude
) -> None:
    answering, other = workers
    claude.reply("Done already.")
    thread_ts = _start_conversation(answering, slack)
    slack.wait_for(lambda: _statuses(slack, thread_ts)[-1:] == ["active"])

    assert _post(other.url, events.agent_session_stopped(USER, CHANNEL, thread_ts)) == 200
    slack.wait_for(
        lambda: _statuses(slack, thread_ts) == ["processing", "active", "active"],
        what="the session set active again",
    )
    [told] = other.logged(log_events.SLACK_AGENT_SESSION_STOPPED_TURN)
    assert told["stopped"] == "nothing"
    assert [m.text for m in slack.bot_messages(CHANNEL, thread_ts)] == ["Done already."]


def test_a_stop_while_the_other_worker_is_gone_still_sets_the_session_active(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path, tmp_path: Path
) -> None:
    siblings = tmp_path / "siblings"
    siblings.mkdir(mode=0o700)
    (siblings / "12345.sock").touch()  # what a worker killed outright leaves behind
    settings = make_settings(slack, claude, memory_dir=memory_dir, slack_experience="agent")
    with OrionServer(settings, worker_siblings=WorkerSiblings(siblings, name="a")) as orion:
        thread_ts = slack.new_ts()
        assert _post(orion.url, events.agent_session_stopped(USER, CHANNEL, thread_ts)) == 200
        slack.wait_for(lambda: _statuses(slack, thread_ts) == ["active"], what="active")
        [told] = orion.logged(log_events.SLACK_AGENT_SESSION_STOPPED_TURN)
        assert told["stopped"] == "nothing"
    assert not (siblings / "a.sock").exists(), "a worker that stops takes its socket away"


# --- `orion serve` with two workers, as deployed ------------------------------------------


def _readiness(orion: OrionServer | OrionProcess) -> tuple[int, dict[str, Any]]:
    response = httpx.get(f"{orion.url}/readyz")
    return response.status_code, response.json()


def test_the_instance_is_ready_only_while_every_worker_is(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path, tmp_path: Path
) -> None:
    """Cloud Run's startup probe reaches one worker: its /readyz answers for all of them."""
    siblings = tmp_path / "siblings"
    siblings.mkdir(mode=0o700)
    settings = make_settings(slack, claude, memory_dir=memory_dir).model_copy(
        update={"http_workers": 2}
    )
    with OrionServer(settings, worker_siblings=WorkerSiblings(siblings, name="a")) as first:
        # Its own checks pass; the other worker is not there yet.
        status, report = wait_until(
            lambda: (r := _readiness(first))[1]["checks"]["workers"]["ready"] == 1 and r,
            PROCESS_WAIT_S,
            "the first worker ready",
        )
        assert status == 503
        assert report["reasons"] == ["workers: 1 of 2 ready"]
        assert all(report["checks"][name]["ok"] for name in ("services", "storage", "claude"))

        with OrionServer(settings, worker_siblings=WorkerSiblings(siblings, name="b")) as second:
            for worker in (first, second):
                status, report = wait_until(
                    lambda w=worker: (r := _readiness(w))[0] == 200 and r,
                    PROCESS_WAIT_S,
                    "both workers ready",
                )
                assert report["checks"]["workers"] == {
                    "ok": True,
                    "state": "ready",
                    "ready": 2,
                    "expected": 2,
                }

        # The second stopped, and took its marker with it.
        status, report = _readiness(first)
        assert (status, report["reasons"]) == (503, ["workers: 1 of 2 ready"])


def test_a_worker_that_cannot_reach_its_siblings_directory_keeps_the_instance_unready(
    slack: FakeSlack, claude: FakeClaude, memory_dir: Path, tmp_path: Path
) -> None:
    """Its Stops could not reach the other worker, and it cannot say it is ready: the
    startup probe keeps failing with the reason, and the log says why (with a traceback)."""
    gone = tmp_path / "removed"
    settings = make_settings(
        slack, claude, memory_dir=memory_dir, slack_experience="agent"
    ).model_copy(update={"http_workers": 2})
    with OrionServer(settings, worker_siblings=WorkerSiblings(gone, name="a")) as orion:
        [unsaid] = orion.wait_logged(log_events.ORION_WORKER_READY_UNSAID, PROCESS_WAIT_S)
        assert unsaid["severity"] == "ERROR"
        assert unsaid["exception"].startswith("Traceback (most recent call last):")
        assert "FileNotFoundError" in unsaid["exception"]
        assert orion.logged(log_events.ORION_WORKER_SIBLINGS_UNREACHABLE)
        status, report = _readiness(orion)
        assert (status, report["reasons"]) == (503, ["workers: 0 of 2 ready"])
        # It still answers the person.
        thread_ts = _start_conversation(orion, slack, "Still there?")
        slack.wait_for(
            timeout=PROCESS_WAIT_S,
            predicate=lambda: _echoed("Still there?") in finished(slack, CHANNEL, thread_ts),
        )


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A temporary directory whose path leaves room for a Unix socket's (pytest's own, with
    xdist's worker in it, may not)."""
    directory = Path(tempfile.mkdtemp(prefix="ow-", dir="/tmp"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def served(
    tmp_path: Path,
    short_tmp: Path,
    slack: FakeSlack,
    claude: FakeClaude,
    gcs_emulator: GcsEmulator,
    gcs_bucket: str,
) -> Iterator[OrionProcess]:
    gcs_emulator.write(gcs_bucket, user_preferences_key(USER), json.dumps(PREFERENCES))
    env = orion_env(
        slack_url=slack.url,
        claude_url=claude.url,
        port=free_port(),
        STORAGE_EMULATOR_HOST=gcs_emulator.url,
        GCS_MEMORIES_BUCKET=gcs_bucket,
        SLACK_EXPERIENCE="agent",
        HTTP_WORKERS="2",
        TMPDIR=str(short_tmp),  # where the workers' siblings directory goes
    )
    orion = OrionProcess(env, cwd=tmp_path, log_path=tmp_path / "orion.log")
    with orion:
        wait_until(lambda: len(_workers(orion)) == 2, 30, "two workers")
        _wait_built(orion, 2)
        yield orion


def _wait_built(orion: OrionProcess, workers: int) -> None:
    """Until `workers` workers have built their clients: a loaded machine takes seconds."""
    wait_until(
        lambda: (
            _count_logged(orion, log_events.SERVICES_READY) >= workers
            and _count_logged(orion, log_events.ORION_WORKER_LISTENING_FOR_SIBLINGS) >= workers
        ),
        90,
        lambda: f"{workers} workers ready; the log so far:\n{orion.log()[-4000:]}",
    )


def _workers(orion: OrionProcess) -> list[psutil.Process]:
    """The worker processes (the parent's other child is multiprocessing's resource
    tracker)."""
    assert orion.process is not None
    workers = []
    for child in psutil.Process(orion.process.pid).children():
        with contextlib.suppress(psutil.NoSuchProcess):  # gone meanwhile: not serving
            if "resource_tracker" not in " ".join(child.cmdline()):
                workers.append(child)
    return workers


def _count_logged(orion: OrionProcess, event: str) -> int:
    return orion.log().count(f'"message": "{event}"')


def test_two_workers_answer_once_confirm_a_stop_wherever_it_lands_and_stop_on_sigterm(
    served: OrionProcess, slack: FakeSlack, claude: FakeClaude, short_tmp: Path
) -> None:
    [siblings] = short_tmp.iterdir()
    assert siblings.stat().st_mode & 0o777 == 0o700, "only this user may reach the workers"
    assert len(list(siblings.glob("*.sock"))) == 2
    _, report = wait_until(
        lambda: (r := _readiness(served))[0] == 200 and r, PROCESS_WAIT_S, "the instance ready"
    )
    assert report["checks"]["workers"] == {"ok": True, "state": "ready", "ready": 2, "expected": 2}

    # An answer, with the person's own preferences from the bucket.
    _answer_slowly(claude)
    answered = _start_conversation(served, slack, "What is on my list today?")
    slack.wait_for(
        timeout=PROCESS_WAIT_S,
        predicate=lambda: (
            _echoed("What is on my list today?") in finished(slack, CHANNEL, answered)
        ),
    )
    [asked] = [r for r in claude.requests if r["model"] != SUMMARY_MODEL]
    assert "Wren" in json.dumps(asked["system"])

    # A Stop, on whichever worker the kernel hands it to: confirmed all the same.
    stopped = _start_conversation(served, slack)
    [streaming] = slack.wait_for(
        timeout=PROCESS_WAIT_S, predicate=lambda: _streamed(slack, stopped), what="the first words"
    )
    assert _post(served.url, events.agent_session_stopped(USER, CHANNEL, stopped)) == 200
    slack.wait_for(
        timeout=PROCESS_WAIT_S,
        predicate=lambda: STOPPED in finished(slack, CHANNEL, stopped),
        what="the stop's confirmation",
    )
    slack.wait_for(
        timeout=PROCESS_WAIT_S,
        predicate=lambda: _statuses(slack, stopped) == ["processing", "active"],
    )
    assert streaming.ts in {m.ts for m in slack.bot_messages(CHANNEL, stopped)}

    _deliver_one_event_six_times(served, slack, claude)

    workers = _workers(served)
    assert served.stop() == 0, served.log()
    assert not any(w.is_running() and w.status() != psutil.STATUS_ZOMBIE for w in workers)
    assert not siblings.exists(), "the siblings directory goes with the workers"
    assert _count_logged(served, log_events.ORION_SHUTDOWN) == 2, "each worker drained"
    assert "Traceback" not in served.log()


def test_a_worker_that_dies_is_replaced_and_the_instance_keeps_answering(
    served: OrionProcess, slack: FakeSlack, claude: FakeClaude
) -> None:
    wait_until(lambda: _readiness(served)[0] == 200, PROCESS_WAIT_S, "the instance ready")
    [killed, kept] = _workers(served)
    killed.send_signal(signal.SIGKILL)
    killed.wait(10)
    # Its marker is left behind, but its pid no longer runs: until a new worker is ready,
    # the instance says which part of it is missing (the replacement imports for seconds).
    status, report = _readiness(served)
    assert (status, report["reasons"]) == (503, ["workers: 1 of 2 ready"])

    wait_until(
        lambda: len([w for w in _workers(served) if w.pid != killed.pid]) == 2,
        30,
        "a worker in its place",
    )
    assert kept.pid in {w.pid for w in _workers(served)}
    _wait_built(served, 3)  # the new one too
    status, report = wait_until(
        lambda: (r := _readiness(served))[0] == 200 and r, PROCESS_WAIT_S, "ready again"
    )
    assert report["checks"]["workers"]["ready"] == 2
    # Every connection is answered, whichever worker takes it.
    questions = [f"Question number {n}?" for n in range(6)]
    threads = [_start_conversation(served, slack, question) for question in questions]
    for question, thread_ts in zip(questions, threads, strict=True):
        slack.wait_for(
            timeout=PROCESS_WAIT_S,
            predicate=lambda q=question, t=thread_ts: _echoed(q) in finished(slack, CHANNEL, t),
            what=f"the answer to {question}",
        )
    assert served.stop() == 0, served.log()


def _deliver_one_event_six_times(
    served: OrionProcess, slack: FakeSlack, claude: FakeClaude
) -> None:
    """Slack redelivers an event it thinks was not acknowledged; the copies may reach
    either worker, at once: answered once, as the event's claim is in the bucket."""
    question = "Which cluster do we use for staging?"
    ts = slack.add_user_message(CHANNEL, None, USER, question)
    body = events.json_body(events.top_level_dm(USER, CHANNEL, question, ts=ts))
    deliveries = [
        events.signed_headers(body, SIGNING_SECRET, retry_num=n or None) for n in range(6)
    ]

    def deliver(headers: dict[str, str]) -> int:  # a connection each: the kernel picks
        return httpx.post(f"{served.url}/slack/events", content=body, headers=headers).status_code

    with ThreadPoolExecutor(len(deliveries)) as pool:
        assert list(pool.map(deliver, deliveries)) == [200] * len(deliveries)
    slack.wait_for(
        timeout=PROCESS_WAIT_S, predicate=lambda: _echoed(question) in finished(slack, CHANNEL, ts)
    )
    wait_until(
        lambda: _count_logged(served, log_events.SLACK_EVENT_DUPLICATE) == 5,
        30,
        "five deliveries dropped as duplicates",
    )
    asked = [r for r in claude.requests if question in last_user_text(r)]
    assert len([r for r in asked if r["model"] != SUMMARY_MODEL]) == 1
    assert [m.text for m in slack.bot_messages(CHANNEL, ts)] == [_echoed(question)]


def test_a_second_signal_ends_each_worker_at_once(
    served: OrionProcess, slack: FakeSlack, claude: FakeClaude
) -> None:
    # uvicorn's workers install their own signal handlers; Orion's go in front of them
    # (app/runtime/worker_watchdog.py), which only holds while uvicorn installs its own
    # before it builds the app: this fails if an upgrade changes that order.
    claude.delay(60)  # an answer in flight that the graceful stop would wait for
    question = "Could you summarise the incident report?"
    thread_ts = _start_conversation(served, slack, question)
    claude.wait_for(lambda: claude.calls, timeout=PROCESS_WAIT_S, what="the Claude request")
    workers = _workers(served)

    served.signal(signal.SIGTERM)
    wait_until(lambda: _count_logged(served, log_events.ORION_STOPPING) == 2, 30, "draining")
    # The worker with the answer in flight is draining (the other may be gone already):
    # a second signal, as a terminal's second Ctrl-C reaches every process.
    draining = [w for w in workers if w.is_running() and w.status() != psutil.STATUS_ZOMBIE]
    assert draining
    for worker in draining:
        worker.send_signal(signal.SIGINT)

    assert served.stop() == 0, served.log()
    stopped = [
        json.loads(line)
        for line in served.log().splitlines()
        if log_events.ORION_STOPPED_AT_ONCE in line
    ]
    # The worker with the answer in flight, at least; the other may have been ending then.
    assert stopped and {line["reason"] for line in stopped} == {"a second SIGINT"}
    assert not [m for m in slack.bot_messages(CHANNEL, thread_ts) if m.text]


def test_workers_whose_supervisor_is_killed_outright_end_too(served: OrionProcess) -> None:
    workers = _workers(served)
    assert served.process is not None
    served.process.kill()  # no SIGTERM to pass on
    served.process.wait(10)

    _, alive = psutil.wait_procs(workers, timeout=30)
    assert not alive, "a worker still holds the port"
    assert "its supervisor is gone" in served.log()


def app_that_cannot_be_built() -> None:
    """An app factory that fails in the workers only (the parent never calls it)."""
    raise RuntimeError("the worker's app cannot be built")


START_WORKERS = """
import sys
from app.http_workers import serve_workers
sys.exit(serve_workers(sys.argv[1], count=2, port=int(sys.argv[2])))
"""


def test_workers_that_cannot_start_stop_the_supervisor_with_a_clear_exit(short_tmp: Path) -> None:
    factory = f"{__name__}:{app_that_cannot_be_built.__name__}"
    result = subprocess.run(
        [sys.executable, "-c", START_WORKERS, factory, str(free_port())],
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(REPO), "TMPDIR": str(short_tmp)},
        capture_output=True,
        text=True,
        timeout=90,
    )

    output = result.stdout + result.stderr
    assert result.returncode == EXIT_PROBLEM, output
    # Not started again and again: uvicorn's supervisor stops at the first failed start.
    assert 1 <= output.count(log_events.ORION_WORKER_START_FAILED) <= 2, output
    assert "the worker's app cannot be built" in output
    assert log_events.ORION_WORKERS_START_FAILED in output
    assert list(short_tmp.iterdir()) == [], "the siblings directory is gone"
