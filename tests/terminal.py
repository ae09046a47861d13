"""A person at a terminal: run an Orion command on a pseudo-terminal, type, press Ctrl-C.

The command gets the pty as its controlling terminal, so what a person does reaches it
the way it would from a real terminal: Ctrl-C (byte 0x03) becomes SIGINT from the line
discipline, `isatty()` is true (readline, the spinner), and the terminal's own line limit
applies to anything not read key by key. `expect` waits for text on the screen (as the
person reads it, ANSI escapes removed) and returns everything seen up to it.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import platform
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.fakes._waiting import PROCESS_PATIENCE_S
from tests.orion_process import REPO
from tests.warm_python import WarmProcess, WarmPython

# x86-64 system call numbers: read, poll, select, pselect6, ppoll.
_WAITING_FOR_INPUT = {"0", "7", "23", "270", "271"}
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")

# Run in the child before the command: make the pty (stdin) the controlling terminal of
# the new session that `start_new_session` created.
_ADOPT_TERMINAL = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


class Terminal:
    def __init__(self, cwd: Path, *args: str, env: dict[str, str]) -> None:
        primary, secondary = os.openpty()
        clean = {"PATH": os.environ["PATH"], "HOME": str(cwd), "PYTHONPATH": str(REPO)}
        clean["TERM"] = "xterm"
        env = {**clean, **env}
        self.process: subprocess.Popen[bytes] | WarmProcess
        if WarmPython.serves(env):
            self.process = WarmProcess(
                list(args),
                cwd=cwd,
                env=env,
                stdin=secondary,
                stdout=secondary,
                stderr=secondary,
                controlling_terminal=True,
            )
        else:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _ADOPT_TERMINAL, sys.executable, "-m", "app.cli", *args],
                cwd=cwd,
                env=env,
                stdin=secondary,
                stdout=secondary,
                stderr=secondary,
                start_new_session=True,
            )
        os.close(secondary)
        self._fd = primary
        # Typing while the command echoes: neither side may block on a full buffer.
        os.set_blocking(primary, False)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.raw = ""  # everything the command wrote, as written
        self.screen = ""  # the same without escape sequences and carriage returns
        self._unfinished = ""  # an escape sequence split between two reads
        self._read_to = 0  # how far `expect` has read `screen`

    def type(self, text: str | bytes, timeout: float = PROCESS_PATIENCE_S) -> None:
        """Type `text` (reading what the command echoes meanwhile: a long paste fills the
        terminal's buffers both ways)."""
        data = text.encode() if isinstance(text, str) else text
        deadline = time.monotonic() + timeout
        while data:
            if time.monotonic() > deadline:
                raise AssertionError(f"the command stopped reading; the screen:\n{self.screen}")
            _, writable, _ = select.select([], [self._fd], [], 0.01)
            if writable:
                with contextlib.suppress(BlockingIOError):
                    data = data[os.write(self._fd, data) :]
            self._read(time.monotonic())

    def signal(self, signum: int) -> None:
        """Send the command a signal once it waits for the keyboard (see `_wait_for_keys`)."""
        self._wait_for_keys()
        self.process.send_signal(signum)

    def ctrl_c(self, *, at_prompt: bool = True) -> None:
        """Ctrl-C — at a prompt, once the command is waiting for the keyboard (see
        `_wait_for_keys`)."""
        if at_prompt:
            self._wait_for_keys()
        self.type(b"\x03")

    def _wait_for_keys(self, timeout: float = PROCESS_PATIENCE_S) -> None:
        """Wait until the command's main thread is blocked waiting for input, as it is
        when a person at the terminal looks at its prompt. CPython's readline loop checks
        for signals only when its select() is interrupted: a SIGINT that lands in the
        instant between echoing a key and calling select() again goes unnoticed until the
        next key — a race a person never hits, but a test reacting to the echo within
        microseconds does. Linux on x86-64 tells which system call a thread is in."""
        path = Path(f"/proc/{self.process.pid}/syscall")
        if platform.machine() != "x86_64" or not path.exists():
            return
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                call = path.read_text().split()[0]
            except (OSError, IndexError):
                return
            if call in _WAITING_FOR_INPUT:
                return
            time.sleep(0.001)

    def ctrl_d(self) -> None:
        self.type(b"\x04")

    def expect(self, text: str, timeout: float = PROCESS_PATIENCE_S) -> str:
        """Wait until `text` appears after what earlier calls found; returns the screen
        from there up to and including it."""
        deadline = time.monotonic() + timeout
        while True:
            at = self.screen.find(text, self._read_to)
            if at >= 0:
                seen = self.screen[self._read_to : at + len(text)]
                self._read_to = at + len(text)
                return seen
            if time.monotonic() > deadline or not self._read(deadline):
                raise AssertionError(f"{text!r} never appeared; the screen:\n{self.screen}")

    def wait(self, timeout: float = PROCESS_PATIENCE_S) -> int:
        """The exit code, once the command has ended (reading what it still wrote);
        raises if it is still running after `timeout`."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"the command did not end; the screen:\n{self.screen}")
            self._read(time.monotonic() + 0.1)
        while self._read(time.monotonic() + 0.1):
            pass  # until EIO: everything written before the end is on the screen
        return self.process.returncode

    def _read(self, deadline: float) -> bool:
        """Read what is there (waiting until `deadline`); False once the command is gone."""
        ready, _, _ = select.select([self._fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return self.process.poll() is None
        try:
            data = os.read(self._fd, 65536)
        except BlockingIOError:
            return self.process.poll() is None
        except OSError:  # EIO: every holder of the pty has closed it
            return False
        text = self._decoder.decode(data)
        self.raw += text
        text, self._unfinished = self._unfinished + text, ""
        escape = text.rfind("\x1b")
        if escape >= 0 and not _ANSI.match(text, escape):
            text, self._unfinished = text[:escape], text[escape:]
        self.screen += _ANSI.sub("", text)
        return bool(data)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self._fd)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
