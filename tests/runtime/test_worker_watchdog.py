"""A worker process ends when it can no longer serve, and stops as one process does
(app/runtime/worker_watchdog.py): each case is a real process, as a worker is."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from app.runtime.stop_signals import EXIT_AT_DEADLINE, EXIT_ON_SIGNAL
from tests import log_events
from tests.orion_process import REPO, finish, start_ready

ENV = {"PATH": os.environ["PATH"], "PYTHONPATH": str(REPO)}

# A worker in miniature: its loop runs, the watchdog watches it (0.5 s to call it
# wedged), then the loop either keeps turning with work between its turns, or is stuck.
WATCHED_LOOP = """
import asyncio, sys, time
from app.runtime.worker_watchdog import WorkerWatchdog

async def main():
    WorkerWatchdog(asyncio.get_running_loop(), wedged_after_s=0.5, check_every_s=0.05).start()
    print("ready", flush=True)
    if sys.argv[1] == "wedged":
        time.sleep(60)  # the loop's thread is stuck: nothing else runs on it
    ends = time.monotonic() + float(sys.argv[2])
    while time.monotonic() < ends:
        time.sleep(0.05)  # busy, but turning: each turn lets the loop take a note
        await asyncio.sleep(0)
    print("done", flush=True)

asyncio.run(main())
"""


def _watched(*args: str, stdout: int | object = subprocess.PIPE) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", WATCHED_LOOP, *args],
        env=ENV,
        stdout=stdout,  # type: ignore[arg-type]
        stderr=subprocess.STDOUT,
        text=True,
    )
    return process


def _stopped_at_once(output: str) -> dict[str, str]:
    [line] = [line for line in output.splitlines() if log_events.ORION_STOPPED_AT_ONCE in line]
    fields: dict[str, str] = json.loads(line)
    return fields


def test_a_worker_whose_loop_is_stuck_ends_so_that_another_takes_its_place() -> None:
    code, output = finish(_watched("wedged", "0"))

    assert code == EXIT_ON_SIGNAL, output
    assert _stopped_at_once(output)["reason"].startswith("its event loop answered nothing")


def test_a_loop_that_is_busy_but_turning_is_left_alone() -> None:
    code, output = finish(_watched("busy", "2"))  # four times the wedged limit

    assert (code, output.split()) == (0, ["ready", "done"])


# Starts the worker, waits until it watches, and exits without stopping it.
PARENT = """
import subprocess, sys, time
child = subprocess.Popen(
    [sys.executable, "-c", sys.argv[1], "busy", "120"], stdout=open(sys.argv[2], "w"),
    stderr=subprocess.STDOUT,
)
while "ready" not in open(sys.argv[2]).read():
    time.sleep(0.01)
print(child.pid, flush=True)
"""


def test_a_worker_whose_supervisor_is_gone_ends(tmp_path: Path) -> None:
    output = tmp_path / "worker.log"
    parent = subprocess.run(
        [sys.executable, "-c", PARENT, WATCHED_LOOP, str(output)],
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    worker = psutil.Process(int(parent.stdout))  # the parent has exited: an orphan now

    try:
        worker.wait(30)
    finally:
        if worker.is_running():
            worker.kill()
    assert _stopped_at_once(output.read_text())["reason"] == "its supervisor is gone"


# A server's own handlers, as uvicorn's: they only note the stop (here: print it); then the
# graceful stop waits for ever, as one stuck on a call that never returns would.
SERVER = """
import os, signal, sys, threading
from app.runtime.worker_watchdog import stop_as_one_process_does

def server_handler(signum, frame):
    # Unbuffered: a handler may run while the main thread is still inside a print.
    os.write(1, f"server stopping {signal.Signals(signum).name}\\n".encode())

signal.signal(signal.SIGTERM, server_handler)
signal.signal(signal.SIGINT, server_handler)
stop_as_one_process_does(deadline_s=float(sys.argv[1]))
print("ready", flush=True)
while True:
    threading.Event().wait(0.05)
"""


def _server(deadline_s: float) -> subprocess.Popen[str]:
    return start_ready(SERVER, str(deadline_s))


def test_the_first_signal_reaches_the_servers_handler_and_the_worker_is_gone_at_the_deadline() -> (
    None
):
    process = _server(deadline_s=0.5)
    process.send_signal(signal.SIGTERM)

    code, output = finish(process)

    assert output.splitlines() == ["server stopping SIGTERM"]
    assert code == EXIT_AT_DEADLINE


def test_a_second_signal_ends_the_worker_at_once() -> None:
    process = _server(deadline_s=3600)
    process.send_signal(signal.SIGTERM)
    assert process.stdout is not None
    assert process.stdout.readline() == "server stopping SIGTERM\n"
    time.sleep(0.1)
    process.send_signal(signal.SIGINT)

    code, output = finish(process)

    assert code == EXIT_ON_SIGNAL
    assert _stopped_at_once(output)["reason"] == "a second SIGINT"
    assert "server stopping SIGINT" not in output, "the second is not passed on"
