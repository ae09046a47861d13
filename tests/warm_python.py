"""Orion commands started from a Python that has already imported the heavy libraries.

Each `python -m app.cli …` a test starts spends seconds of CPU importing the Anthropic SDK,
Bolt, google-cloud-storage and the rest before Orion's own code runs; the suite starts over
a hundred of them (docs/testing.md). A test of what a command does, not of how a process
starts, gets the same process from a fork of a "warm" Python instead: one per test worker,
which imported those libraries (nothing of app/, which the command imports itself, in its
own order) and forks a child for each command. The child takes the test's stdin, stdout and
stderr (sent over a Unix socket), working directory, environment and arguments, then runs
`app.cli` as `python -m` would, and ends as that would (atexit, threads joined); its exit
status comes back over the same socket. A test of a cold start (tests/e2e/
test_fresh_processes.py) still spawns a new interpreter, as does a command whose environment
would start Python itself differently (PYTHON* or locale variables other than the warm
one's).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import io
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from tests.fakes._waiting import PATIENCE_S

REPO = Path(__file__).resolve().parents[1]

# What every Orion command imports and takes seconds of CPU to (python -X importtime).
PRELOAD = (
    "anthropic",
    "google.cloud.storage",
    "langfuse",
    "slack_bolt.async_app",
    "slack_bolt.adapter.starlette.async_handler",
    "slack_sdk.web.async_client",
    "starlette.applications",
    "uvicorn",
    "uvloop",
    "pydantic_settings",
    "structlog",
)
# Variables read when a module is imported, not when it is used: Python's own (its paths,
# modes, stdio encoding), and those the preloaded libraries read at import (google-auth's
# metadata server, google-cloud-storage's API version, structlog's and aiohttp's switches).
# Langfuse reads two of its variables at import; Orion's own three (keys, URL) when used.
_READ_AT_START = ("PYTHON", "LC_", "GCE_METADATA_", "AIOHTTP_", "PROTOCOL_BUFFERS_")
_NAMES_READ_AT_START = ("LANG", "LANGUAGE", "NO_GCE_CHECK", "API_VERSION_OVERRIDE")
_NAMES_READ_AT_START += ("NO_COLOR", "FORCE_COLOR")
_NAMES_READ_AT_START += (
    "LANGFUSE_PROMPT_CACHE_DEFAULT_TTL_SECONDS",
    "LANGFUSE_MAX_BATCH_SIZE_BYTES",
)
_FDS = 3  # stdin, stdout, stderr
_MAX_REQUEST = 1 << 20


def _read_at_start(env: dict[str, str]) -> dict[str, str]:
    return {
        name: value
        for name, value in env.items()
        if name.startswith(_READ_AT_START) or name in _NAMES_READ_AT_START
    }


# ---------------------------------------------------------------------------------------
# The warm Python (runs in its own process: `python -m tests.warm_python SOCKET_PATH`).


def _serve(path: str) -> dict[str, Any]:
    """Accept requests until the socket's peer goes away; returns only in a forked child,
    with what that child is to run."""
    for name in PRELOAD:
        __import__(name)
    assert threading.active_count() == 1, "a preloaded library started a thread: no fork"
    # What the imports made lives as long as any command: out of every garbage collection,
    # the commands' own included. Each command's exit otherwise walked (and so copied from
    # this process) every object the imports made: about 1 s of CPU a command.
    gc.freeze()
    started_with = json.loads(os.environ.pop("WARM_PYTHON_START_ENV"))
    # What Python added to its own environment as it started (PEP 538's LC_CTYPE): a
    # command started afresh with the same environment would have it too.
    added = {k: v for k, v in os.environ.items() if k not in started_with}
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin, selectors.EVENT_READ, "parent")
    while True:
        for key, _ in selector.select():
            if key.data == "parent":  # the test worker is done (or gone)
                os.unlink(path)
                return {}
            if key.data == "accept":
                connection, _ = listener.accept()
                selector.register(connection, selectors.EVENT_READ, ("request", connection))
                continue
            kind, *rest = key.data
            if kind == "exited":
                pid, connection = rest
                selector.unregister(key.fileobj)
                os.close(key.fd)
                _, status = os.waitpid(pid, 0)
                with contextlib.suppress(OSError):
                    connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                connection.close()
                continue
            connection = rest[0]
            selector.unregister(connection)
            message, fds, _, _ = socket.recv_fds(connection, _MAX_REQUEST, _FDS)
            if len(fds) != _FDS:
                connection.close()
                for fd in fds:
                    os.close(fd)
                continue
            request = json.loads(message)
            pid = os.fork()
            if pid == 0:
                selector.close()
                listener.close()
                connection.close()
                return _become(request, fds, added)
            for fd in fds:
                os.close(fd)
            connection.sendall(f"{pid}\n".encode())
            selector.register(os.pidfd_open(pid), selectors.EVENT_READ, ("exited", pid, connection))


def _become(request: dict[str, Any], fds: list[int], added: dict[str, str]) -> dict[str, Any]:
    """In the forked child: take the command's place (what `subprocess.Popen` and the
    interpreter's start would have set up)."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    if request["new_session"]:
        os.setsid()
    if request["controlling_terminal"]:
        import fcntl
        import termios

        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update({**added, **request["env"]})
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # stdio as the interpreter makes it for these descriptors (line-buffered on a terminal).
    encoding, errors = sys.stdout.encoding, sys.stdout.errors
    sys.stdin = sys.__stdin__ = _stdio(0, "r", encoding, errors)
    sys.stdout = sys.__stdout__ = _stdio(1, "w", encoding, errors)
    sys.stderr = sys.__stderr__ = _stdio(2, "w", encoding, "backslashreplace")
    sys.path[0] = os.getcwd()  # as `python -m` puts it
    return request


def _stdio(fd: int, mode: str, encoding: str, errors: str) -> io.TextIOWrapper:
    """sys.stdin, stdout or stderr as the interpreter makes them at its start: stdout
    line-buffered on a terminal, stderr always."""
    binary = open(fd, mode + "b", closefd=False)  # noqa: SIM115 - the interpreter's, for good
    line_buffering = mode == "w" and (fd == 2 or os.isatty(fd))
    return io.TextIOWrapper(binary, encoding, errors, line_buffering=line_buffering)


def _main() -> None:
    request = _serve(sys.argv[1])
    if not request:
        return
    import runpy

    sys.argv = [str(REPO / "app" / "cli.py"), *request["args"]]
    runpy.run_module("app.cli", run_name="__main__", alter_sys=True)


# ---------------------------------------------------------------------------------------
# The test worker's side.


class WarmPython:
    """This worker's warm Python, started at its first use."""

    _lock = threading.Lock()
    _instance: WarmPython | None = None

    def __init__(self) -> None:
        self.env = {"PATH": os.environ["PATH"], "HOME": "/tmp", "PYTHONPATH": str(REPO)}
        self.path = f"/tmp/orion-warm-{os.getpid()}-{time.monotonic_ns()}.socket"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.warm_python", self.path],
            cwd=REPO,
            env={**self.env, "WARM_PYTHON_START_ENV": json.dumps(self.env)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline() == "ready\n", "the warm Python did not start"
        atexit.register(self._stop)

    def _stop(self) -> None:
        """At the worker's end: the warm Python sees its stdin close and ends."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(PATIENCE_S)
        except subprocess.TimeoutExpired:
            self.process.kill()

    @classmethod
    def get(cls) -> WarmPython:
        with cls._lock:
            if cls._instance is None or cls._instance.process.poll() is not None:
                cls._instance = cls()
            return cls._instance

    @classmethod
    def serves(cls, env: dict[str, str]) -> bool:
        """Whether a command with this environment starts as it would afresh, in a test.
        A benchmark (no test running) always starts a new interpreter: it measures Orion
        as deployed, where nothing was imported before the command."""
        in_a_test = "PYTEST_CURRENT_TEST" in os.environ
        return in_a_test and _read_at_start(env) == {"PYTHONPATH": str(REPO)}


class WarmProcess:
    """An Orion command forked from the warm Python: what tests use of `subprocess.Popen`."""

    def __init__(
        self,
        args: list[str],
        *,
        cwd: Path | str,
        env: dict[str, str],
        stdin: int,
        stdout: int,
        stderr: int,
        new_session: bool = False,
        controlling_terminal: bool = False,
    ) -> None:
        request = {
            "args": args,
            "cwd": str(cwd),
            "env": env,
            "new_session": new_session or controlling_terminal,
            "controlling_terminal": controlling_terminal,
        }
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.connect(WarmPython.get().path)
        socket.send_fds(self._socket, [json.dumps(request).encode()], [stdin, stdout, stderr])
        self._reader = self._socket.makefile("r")
        self.pid = int(self._reader.readline())
        self.returncode: int | None = None
        self._exited = threading.Event()
        threading.Thread(target=self._wait_for_exit, daemon=True).start()

    def _wait_for_exit(self) -> None:
        line = self._reader.readline()
        self.returncode = int(line) if line else -signal.SIGKILL
        self._reader.close()
        self._socket.close()
        self._exited.set()

    def poll(self) -> int | None:
        return self.returncode if self._exited.is_set() else None

    def wait(self, timeout: float | None = None) -> int:
        if not self._exited.wait(timeout):
            raise subprocess.TimeoutExpired(f"warm process {self.pid}", timeout or 0)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


def run_warm(
    args: list[str], *, cwd: Path, env: dict[str, str], stdin: str, timeout: float
) -> subprocess.CompletedProcess[str]:
    """`subprocess.run(…, input=stdin, capture_output=True, text=True)` of an Orion command."""
    pipes = [os.pipe() for _ in range(_FDS)]
    child_ends = [pipes[0][0], pipes[1][1], pipes[2][1]]
    try:
        process = WarmProcess(
            args, cwd=cwd, env=env, stdin=child_ends[0], stdout=child_ends[1], stderr=child_ends[2]
        )
    finally:
        for fd in child_ends:
            os.close(fd)
    outputs: dict[int, bytes] = {}

    def read(index: int, stream: IO[bytes]) -> None:
        with stream:
            outputs[index] = stream.read()

    def write(stream: IO[bytes]) -> None:
        with contextlib.suppress(BrokenPipeError), stream:
            stream.write(stdin.encode())

    threads = [
        threading.Thread(target=write, args=(os.fdopen(pipes[0][1], "wb"),), daemon=True),
        *(
            threading.Thread(target=read, args=(i, os.fdopen(pipes[i][0], "rb")), daemon=True)
            for i in (1, 2)
        ),
    ]
    for thread in threads:
        thread.start()
    try:
        code = process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
    for thread in threads:
        thread.join(timeout)

    def text(index: int) -> str:
        # As text=True reads it: universal newlines.
        return outputs.get(index, b"").decode().replace("\r\n", "\n").replace("\r", "\n")

    return subprocess.CompletedProcess(args, code, text(1), text(2))


if __name__ == "__main__":
    _main()
