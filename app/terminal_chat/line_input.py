"""Reading one message from the person: with line editing, whole however long it is (a terminal's
canonical mode cuts a line at 4,095 bytes), and one message however many lines a paste holds — lines
already waiting after an Enter are a paste (docs/architecture.md, "Inside app/terminal_chat")."""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import sys
import termios
from collections.abc import Iterator
from typing import TextIO

try:
    import readline
except ImportError:  # pragma: no cover - depends on how Python was built
    readline = None  # type: ignore[assignment]

_ERASE = {b"\x7f", b"\x08"}  # what Backspace sends (DEL, or ^H on some terminals)
_EOF = b"\x04"  # Ctrl-D
_ENTER = {b"\r", b"\n"}
# Input waiting this soon after an Enter came with it: a paste (a terminal writes one in a
# burst, large ones in chunks a few milliseconds apart), not a person typing.
PASTE_GAP_S = 0.05
# Where the second and later lines of a pasted message are shown.
CONTINUATION = "...  "


class LineReader:
    """`read(prompt)` returns one message; EOFError on Ctrl-D at an empty line, and
    KeyboardInterrupt on Ctrl-C, after which `typed` is what the message held."""

    def __init__(
        self,
        stdin: TextIO = sys.stdin,
        stdout: TextIO = sys.stdout,
        *,
        with_readline: bool = readline is not None,
    ) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self._terminal = stdin.isatty()
        self._keys = self._terminal and not (with_readline and stdout.isatty())
        self._typed = ""  # the line being read key by key
        self._lines: list[str] = []  # the message's lines read so far

    @property
    def typed(self) -> str:
        if readline is not None and not self._keys:
            current = readline.get_line_buffer()
        else:
            current = self._typed
        return "\n".join([*self._lines, current])

    def read(self, prompt: str) -> str:
        self._lines = []
        self._lines.append(self._read_line(prompt))
        while self._pasted_more():
            try:
                self._lines.append(self._read_line(CONTINUATION))
            except EOFError:
                break
        message, self._lines = "\n".join(self._lines), []
        return message

    def _read_line(self, prompt: str) -> str:
        self._typed = ""
        if not self._keys:
            return input(prompt)
        self._stdout.write(prompt)
        self._stdout.flush()
        return self._read_keys(self._stdin.fileno())

    def _pasted_more(self) -> bool:
        """Whether more input is already waiting: the rest of a paste."""
        if not self._terminal:
            return False
        fd = self._stdin.fileno()
        # Asked key by key: in the terminal's usual mode, a last line without its line
        # break would not count as waiting.
        with _keys_one_by_one(fd):
            ready, _, _ = select.select([fd], [], [], PASTE_GAP_S)
        return bool(ready)

    def _read_keys(self, fd: int) -> str:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        with _keys_one_by_one(fd):
            while True:
                key = os.read(fd, 1)
                if not key or (key == _EOF and not self._typed):
                    raise EOFError
                if key in _ENTER:
                    self._echo("\r\n")
                    return self._typed
                if key in _ERASE:
                    if self._typed:
                        self._typed = self._typed[:-1]
                        self._echo("\b \b")
                    continue
                if (text := decoder.decode(key)) and text.isprintable():
                    self._typed += text
                    self._echo(text)

    def _echo(self, text: str) -> None:
        self._stdout.write(text)
        self._stdout.flush()


@contextlib.contextmanager
def _keys_one_by_one(fd: int) -> Iterator[None]:
    """Non-canonical mode without the terminal's echo (we echo, Backspace included), for
    as long as one line takes; Ctrl-C still raises SIGINT (ISIG stays on)."""
    saved = termios.tcgetattr(fd)
    raw = termios.tcgetattr(fd)
    raw[3] &= ~(termios.ICANON | termios.ECHO)  # lflags
    raw[6][termios.VMIN], raw[6][termios.VTIME] = 1, 0
    termios.tcsetattr(fd, termios.TCSANOW, raw)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)
