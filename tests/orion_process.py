"""Run Orion as a real process (`python -m app.cli …`), configured by environment.

Used where a test needs what only separate processes show: cold start, two instances
sharing one bucket (as on Cloud Run), and the commands a person types. A command starts
from the worker's warm Python (tests/warm_python.py) unless the test is about a fresh
interpreter's start (`fresh=True`).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.fakes._waiting import PATIENCE_S, PROCESS_PATIENCE_S, wait_until
from tests.orion_server import ANTHROPIC_KEY, BOT_TOKEN, SIGNING_SECRET, loopback_client
from tests.warm_python import WarmProcess, WarmPython, run_warm

REPO = Path(__file__).resolve().parents[1]


def run_orion_command(
    cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """`python -m app.cli ARGS` to its end, in a clean environment (PATH, HOME, the repo on
    PYTHONPATH, and `env`) and an empty working directory: no developer `.env` leaks in."""
    clean = {"PATH": os.environ["PATH"], "HOME": str(cwd), "PYTHONPATH": str(REPO)}
    env = {**clean, **(env or {})}
    if WarmPython.serves(env):
        return run_warm(list(args), cwd=cwd, env=env, stdin=stdin, timeout=PROCESS_PATIENCE_S)
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=PROCESS_PATIENCE_S,
    )


def copied_env_example(filled: dict[str, str]) -> str:
    """.env.example as `cp .env.example .env` leaves it, with `filled` set (a commented-out
    line uncommented): what a newcomer's .env holds."""
    lines = []
    for line in (REPO / ".env.example").read_text().splitlines():
        name = line.removeprefix("# ").partition("=")[0]
        lines.append(f"{name}={filled[name]}" if name in filled else line)
    return "\n".join(lines) + "\n"


def start_ready(script: str, *args: str) -> subprocess.Popen[str]:
    """`python -c script args` with the repo importable and its output piped, once it has
    printed "ready" (its signal handlers are in place by then)."""
    process = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    return process


def finish(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Wait (at most PROCESS_PATIENCE_S) for a process started with its output piped; its exit code
    and output. Killed if it is still there."""
    try:
        output, _ = process.communicate(timeout=PROCESS_PATIENCE_S)
    finally:
        process.kill()
    return process.returncode, output


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def orion_env(*, slack_url: str, claude_url: str, port: int, **extra: str) -> dict[str, str]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": str(REPO),
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "SLACK_API_URL": slack_url,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        "ANTHROPIC_BASE_URL": claude_url,
        "ANTHROPIC_MAX_RETRIES": "0",
        "PORT": str(port),
        "LOG_FORMAT": "json",
    }
    env.update(extra)
    return env


class OrionProcess:
    def __init__(
        self,
        env: dict[str, str],
        *,
        cwd: Path,
        log_path: Path,
        command: str = "serve",
        argv: list[str] | None = None,
        fresh: bool = False,
    ) -> None:
        """`orion COMMAND`, or `argv` (a script that starts Orion, say); `fresh`: in a new
        interpreter, not one forked from the warm Python (a test of a cold start)."""
        self.env = env
        self.argv = argv or [sys.executable, "-m", "app.cli", command]
        self.url = f"http://127.0.0.1:{env['PORT']}"
        self._cwd = cwd
        self._log_path = log_path
        self._warm = argv is None and not fresh and WarmPython.serves(env)
        self._command = command
        self.process: subprocess.Popen[bytes] | WarmProcess | None = None

    def start(self) -> float:
        """Spawn; returns the monotonic time of the spawn."""
        spawned = time.monotonic()
        with self._log_path.open("ab") as log:
            if self._warm:
                with open(os.devnull, "rb") as nothing:
                    self.process = WarmProcess(
                        [self._command],
                        cwd=self._cwd,
                        env=self.env,
                        stdin=nothing.fileno(),
                        stdout=log.fileno(),
                        stderr=log.fileno(),
                    )
                return spawned
            self.process = subprocess.Popen(
                self.argv,
                cwd=self._cwd,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        return spawned

    def wait_healthy(self, timeout: float = PROCESS_PATIENCE_S) -> float:
        """Poll /healthz; returns the monotonic time of the first 200."""
        deadline = time.monotonic() + timeout
        with loopback_client(timeout=0.5) as client:
            while time.monotonic() < deadline:
                try:
                    if client.get(f"{self.url}/healthz").status_code == 200:
                        return time.monotonic()
                except httpx.TransportError:
                    pass
                if self.process is not None and (code := self.process.poll()) is not None:
                    raise RuntimeError(f"Orion exited ({code}) before it was healthy: {self.log()}")
                time.sleep(0.005)
        raise TimeoutError(f"Orion not healthy after {timeout}s: {self.log()}")

    def stop(self, timeout: float = PATIENCE_S, *, sig: int = signal.SIGTERM) -> int:
        """SIGTERM, as Cloud Run does (or `sig`: SIGINT is Ctrl-C); returns the exit code,
        or raises if the process is still there after `timeout`."""
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            ignored = signal.Signals(sig).name
            raise AssertionError(f"Orion ignored {ignored}: {self.log()}") from None

    def wait_exit(self, timeout: float) -> int:
        """Its exit code once it has ended by itself (no signal sent); raises if it is still
        there after `timeout`."""
        assert self.process is not None
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"Orion still running after {timeout}s: {self.log()}") from None

    def signal(self, sig: int) -> None:
        assert self.process is not None
        self.process.send_signal(sig)

    def wait_logged(self, event: str, timeout: float = PROCESS_PATIENCE_S) -> None:
        """Wait for a JSON log line whose message is `event`."""
        wait_until(lambda: f'"message": "{event}"' in self.log(), timeout, event)

    def log(self) -> str:
        return self._log_path.read_text(errors="replace") if self._log_path.exists() else ""

    def __enter__(self) -> OrionProcess:
        self.start()
        self.wait_healthy()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
