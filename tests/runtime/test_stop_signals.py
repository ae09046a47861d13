"""Stopping on a signal is bounded (app/runtime/stop_signals.py): whatever the graceful stop
waits for (here, a worker thread stuck in a call that never returns), the process is gone
once the stop deadline has passed after the first signal — and at once on a second one."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from app.runtime.stop_signals import EXIT_AT_DEADLINE, EXIT_ON_SIGNAL
from tests import log_events
from tests.orion_process import finish, start_ready

# A server in miniature: its main thread serves until the first signal asks it to stop,
# then returns, and Python's exit waits for a worker thread stuck for good, as one blocked
# in a storage call would be. (The main thread wakes up now and then, as an event loop
# does, so that Python runs the signal handlers.)
STUCK_PROCESS = """
import signal, sys, threading
from app.runtime.stop_signals import StopSignals

stopping = threading.Event()
stops = StopSignals(stopping.set, deadline_s=float(sys.argv[1]))
signal.signal(signal.SIGTERM, lambda signum, frame: stops.handle(signum))
signal.signal(signal.SIGINT, lambda signum, frame: stops.handle(signum))
threading.Thread(target=threading.Event().wait).start()
print("ready", flush=True)
while not stopping.wait(0.05):
    pass
print("stopping", flush=True)
if len(sys.argv) > 2:  # a graceful stop that itself takes forever
    while True:
        threading.Event().wait(0.05)
"""


def _stuck(deadline_s: float, *more: str) -> subprocess.Popen[str]:
    return start_ready(STUCK_PROCESS, str(deadline_s), *more)


def test_the_process_is_gone_at_the_deadline_whatever_it_waits_for(tmp_path: Path) -> None:
    process = _stuck(deadline_s=0.5)
    process.send_signal(signal.SIGTERM)

    code, output = finish(process)

    assert code == EXIT_AT_DEADLINE, output


def test_a_second_signal_ends_it_at_once(tmp_path: Path) -> None:
    # The deadline cannot be what ends it, nor the graceful stop.
    process = _stuck(3600, "graceful stop that never ends")
    process.send_signal(signal.SIGINT)
    assert process.stdout is not None
    assert process.stdout.readline() == "stopping\n"
    process.send_signal(signal.SIGINT)

    code, output = finish(process)

    assert code == EXIT_ON_SIGNAL
    assert json.loads(output) == {
        "severity": "WARNING",
        "message": log_events.ORION_STOPPED_AT_ONCE,
        "reason": "a second SIGINT",
    }
