"""The terminal side of `orion chat`: the prompt, Ctrl-C, the chat's own commands and the
farewell (README.md, "Try it"). The main thread waits for the person, so Ctrl-C reaches it
wherever it waits; the conversation runs on a background loop (`BackgroundLoop`)."""

from __future__ import annotations

import asyncio
import itertools
import re
import signal
import sys
import threading
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from app.config import ENV_HINT, EXIT_PROBLEM, EXIT_UNAVAILABLE, Settings, quoted, report_problem
from app.learning.memory_note import file_name, shown_lines
from app.learning.undo import UNAVAILABLE, outcome_text
from app.memory.scopes import validate_user_id
from app.observability.invisible_text import INVISIBLE
from app.observability.logging import get_logger
from app.observability.setup import log_to_file
from app.runtime.stop_signals import StopSignals
from app.storage.store import StoreError
from app.store_problems import store_problem
from app.terminal_chat import WHO
from app.terminal_chat.conversation import Conversation, Folder, SettingRefused
from app.terminal_chat.line_input import LineReader

if TYPE_CHECKING:
    from app.agent.memory_task import MemoryTask

log = get_logger(__name__)

YOU = "you> "
ORION = "orion> "
LOG_FILE = Path(".orion/chat.log")
STOPPED = "(stopped)"
UNDO_COMMAND = "/undo"
HELP_COMMAND = "/help"
QUIT_COMMAND = "/quit"
# The chat's own commands (never sent to Claude), as `/help` lists them.
COMMANDS = {
    UNDO_COMMAND: "puts back what the last answer changed in your memory",
    QUIT_COMMAND: "ends the conversation, as Ctrl-D does",
    HELP_COMMAND: "lists these commands",
}
# A message that is one word after a slash, like the commands: a command mistyped, not a
# question for Claude.
_COMMAND_LIKE = re.compile(r"/[A-Za-z][\w-]*")
NOTHING_TO_UNDO = (
    "Nothing to undo: the last answer changed nothing in your memory that can be undone."
)
# Under an answer whose changes can be undone: /undo reaches the last answer only.
UNDO_HINT = f"({UNDO_COMMAND} puts it back, until your next message)"
# The end-of-conversation clean-up (closing clients) when the person is in a hurry.
CLOSE_TIMEOUT_S = 3.0


class Terminated(Exception):
    """SIGTERM: end the conversation now."""


def run_console(settings: Settings, user_id: str, *, out: TextIO = sys.stdout) -> int:
    try:
        validate_user_id(user_id)
    except ValueError:
        problem = f"--user: not a Slack user id (like U0123ABCD): {quoted(user_id)}"
        return report_problem(WHO, problem, EXIT_PROBLEM)
    log_to_file(settings, LOG_FILE)
    reader = LineReader(sys.stdin, out)
    signal.signal(signal.SIGTERM, _raise_terminated)
    with BackgroundLoop() as loop:
        out.write("Orion is starting…\n")
        out.flush()
        try:
            conversation = loop.run(Conversation.start(settings, user_id))
        except (KeyboardInterrupt, Terminated):
            out.write("\n")
            return 0
        except StoreError as exc:
            return _store_unusable(settings, exc)
        written: list[Folder] = []
        try:
            code = _talk(loop, conversation, reader, out)
        except Terminated:
            code = 0
        else:
            _save_learning(loop, conversation, out)
            if code == 0:
                written = _folders_written(loop, conversation)
        _close(loop, conversation)
    if written:
        lines = "".join(f"  {folder.location}  ({folder.holds})\n" for folder in written)
        out.write(f"Memories about {user_id} are in:\n{lines}")
    return code


def _store_unusable(settings: Settings, error: StoreError) -> int:
    """The bucket cannot be used at all: one line saying why and what to do."""
    log.error("chat.store_unusable", error=type(error).__name__, exc_info=error)
    problem, code = store_problem(settings, error) or (
        f"{settings.store_location()} failed ({type(error).__name__}; details in {LOG_FILE})",
        EXIT_UNAVAILABLE,
    )
    return report_problem(WHO, problem, code)


def _talk(loop: BackgroundLoop, conversation: Conversation, reader: LineReader, out: TextIO) -> int:
    out.write(
        f"Talking to Orion as {conversation.user_id}. Ctrl-C stops an answer; "
        f"Ctrl-D (or Ctrl-C at an empty prompt) ends the conversation; {HELP_COMMAND} "
        "lists the commands.\n\n"
    )
    try:
        greeting = loop.run(conversation.greeting())
    except KeyboardInterrupt:
        greeting = None
    if greeting:
        out.write(f"{ORION}{printable(greeting)}\n\n")
    interrupted = False  # the last thing the person did was Ctrl-C at the prompt
    while True:
        try:
            text = reader.read(YOU).strip()
        except EOFError:
            out.write("\n")
            return 0
        except KeyboardInterrupt:
            out.write("\n")
            if interrupted or not reader.typed.strip():
                return 0
            interrupted = True
            continue
        interrupted = False
        if not text:
            continue
        if text == QUIT_COMMAND:
            return 0
        if text == HELP_COMMAND:
            out.write(_help())
            continue
        if text == UNDO_COMMAND:
            try:
                loop.run(_undo(conversation, out))
            except KeyboardInterrupt:  # as for an answer: stop it, back to the prompt
                out.write(f"\n{STOPPED}\n\n")
            continue
        if _COMMAND_LIKE.fullmatch(text):
            out.write(f"No command {text[:40]} here: {HELP_COMMAND} lists them.\n\n")
            continue
        try:
            loop.run(_answer(conversation, text, out))
        except KeyboardInterrupt:
            out.write(f"\n{STOPPED}\n\n")
            continue
        except SettingRefused as refused:
            log.error(
                "chat.claude_refused",
                status=refused.status,
                error_type=refused.error_type,
                exc_info=refused,
            )
            out.write("\n")
            out.flush()
            return report_problem(
                "orion chat stopped", refused.problem, EXIT_PROBLEM, hint=ENV_HINT
            )
        out.write("\n\n")


def _help() -> str:
    lines = "".join(f"  {name:<7}{what}\n" for name, what in COMMANDS.items())
    return (
        f"{lines}Anything else goes to Orion; a paste of several lines is one message. "
        "Ctrl-C stops an answer; Ctrl-D ends the conversation.\n\n"
    )


async def _answer(conversation: Conversation, text: str, out: TextIO) -> None:
    """The answer, as it streams; raises SettingRefused. A turn that fails otherwise is said
    in the answer's place (after what was shown of it), and the conversation goes on."""
    from app.agent.errors import friendly_error

    async with TerminalReply(out, prefix=ORION) as reply:
        try:
            await conversation.answer(text, reply)
        except SettingRefused:
            raise
        except Exception as exc:  # as in Slack
            log.warning("chat.turn.failed", exc_info=exc)
            out.write(("\n\n" if reply.started else "") + friendly_error(exc))
            return
    note = conversation.last_note
    if note is not None:
        # The note Slack shows under the answer; here /undo is its button.
        lines = "".join(f"\n  {line}" for line in shown_lines([str(n) for n in note.lines]))
        hint = f"\n  {UNDO_HINT}" if note.undo_id else ""
        out.write(f"\n{lines}{hint}")


async def _undo(conversation: Conversation, out: TextIO) -> None:
    try:
        result = await conversation.undo_last()
    except Exception as exc:
        log.warning("chat.undo.failed", exc_info=exc)
        out.write(f"{UNAVAILABLE}\n\n")
        return
    if result is None:
        out.write(f"{NOTHING_TO_UNDO}\n\n")
        return
    names = [file_name(conversation.user_id, key) for key in result.changed_since]
    out.write(f"{outcome_text(result, names)}\n\n")


def _save_learning(loop: BackgroundLoop, conversation: Conversation, out: TextIO) -> None:
    if not conversation.learning:
        return
    out.write("Saving what this conversation taught Orion… (Ctrl-C skips)\n")
    out.flush()
    try:
        loop.run(conversation.finish_learning())
    except (KeyboardInterrupt, Terminated):
        out.write("\n")


def _close(loop: BackgroundLoop, conversation: Conversation) -> None:
    try:
        loop.run(conversation.close(), timeout=CLOSE_TIMEOUT_S)
    except (KeyboardInterrupt, Terminated, TimeoutError):
        pass
    except Exception as exc:
        log.warning("chat.close.failed", exc_info=exc)


def _folders_written(loop: BackgroundLoop, conversation: Conversation) -> list[Folder]:
    try:
        return loop.run(conversation.folders_written(), timeout=CLOSE_TIMEOUT_S)
    except (KeyboardInterrupt, Terminated, TimeoutError):
        return []


_stops = StopSignals(lambda: None)


def _raise_terminated(signum: int, _frame: object) -> None:
    _stops.handle(signum)  # a second one, or the deadline, ends the process at once
    raise Terminated


# --- the answer as it streams (the agent's ReplySink for a terminal) ------------------------
# Until the first words arrive (memory to restore, a slow first token), a spinner on a
# terminal says Orion is at it; piped output gets only the answer.

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
FRAME_S = 0.1
WAITING = "thinking…"
# Back to the start of the line, and clear it.
_CLEAR_LINE = "\r\x1b[K"
# What a terminal would act on rather than show: control characters (ESC starts the
# sequences that move the cursor, clear the screen or set the window's title; CR rewrites
# the line) but the line break and the tab.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """`text` as a terminal shows it and nothing else: without control characters, and without the
    invisible ones (a direction override that would turn the line around). An answer or a greeting
    can hold stored words, which a person or a prompt-injected Claude may have written."""
    return INVISIBLE.sub("", _CONTROL.sub("", text))


class TerminalReply:
    def __init__(self, out: TextIO, *, prefix: str) -> None:
        self._out = out
        self._prefix = prefix  # what the answer's first line starts with ("orion> ")
        self._spinner: asyncio.Task[None] | None = None
        self.started = False  # any of the answer shown yet

    async def __aenter__(self) -> TerminalReply:
        self._out.write(self._prefix)
        self._out.flush()
        if self._out.isatty():
            self._spinner = asyncio.create_task(self._spin())
        return self

    async def __aexit__(self, *_: object) -> None:
        self._stop_spinning()

    async def append(self, markdown: str) -> None:
        self._stop_spinning()
        self.started = True
        self._out.write(printable(markdown))
        self._out.flush()

    async def show_progress(self, status: str) -> None:
        self._stop_spinning()
        self._out.write(f"\n  ({printable(status)})\n")
        self._out.flush()

    async def show_task(self, task: MemoryTask) -> None:
        """Nothing more to print: `show_progress` already names each step on a terminal."""

    def link_to(self, channel: str, ts: str, thread_ts: str | None = None) -> str | None:
        return None  # a terminal conversation has no Slack thread to link to

    async def _spin(self) -> None:
        for frame in itertools.cycle(FRAMES):
            self._out.write(f"{_CLEAR_LINE}{self._prefix}{frame} {WAITING}")
            self._out.flush()
            await asyncio.sleep(FRAME_S)

    def _stop_spinning(self) -> None:
        spinner, self._spinner = self._spinner, None
        if spinner is None:
            return
        # The spinner waits in its sleep (one loop, one thread): once cancelled, it never
        # writes again, so the line can be cleared now.
        spinner.cancel()
        self._out.write(f"{_CLEAR_LINE}{self._prefix}")
        self._out.flush()


# --- an event loop on a thread of its own, so that the main thread can wait for a person --
# (readline needs the main thread, which gets Ctrl-C wherever it waits, even for an answer).

T = TypeVar("T")

# How long an interrupted coroutine may take to wind down (close a stream, say).
WIND_DOWN_S = 5.0
WAKE_UP_S = 0.2


class BackgroundLoop:
    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name="orion-chat-loop", daemon=True)

    def __enter__(self) -> BackgroundLoop:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(WIND_DOWN_S)
        if not self._thread.is_alive():
            self._loop.close()

    def _serve(self) -> None:
        # Blocked here: a signal the kernel handed this thread (or its workers) would never
        # reach the main thread, asleep in readline, where Python runs signal handlers.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        self._loop.run_forever()

    def run(self, work: Coroutine[Any, Any, T], *, timeout: float | None = None) -> T:
        """Run `work` on the loop and wait for its result. A KeyboardInterrupt (or any exception
        raised in this thread by a signal handler) while waiting cancels `work`, waits for it to
        wind down, then propagates. `timeout` ends the wait (and `work`) with TimeoutError."""
        finished = threading.Event()
        started: list[asyncio.Task[T]] = []

        def start() -> None:
            task = self._loop.create_task(_within(work, timeout))
            task.add_done_callback(lambda _: finished.set())  # runs if cancelled early too
            started.append(task)

        self._loop.call_soon_threadsafe(start)
        try:
            # In short waits: Python runs signal handlers (Ctrl-C's KeyboardInterrupt) only
            # when the main thread wakes up.
            while not finished.wait(WAKE_UP_S):
                pass
        except BaseException:
            # After `start` (callbacks run in order), so there is a task to cancel.
            self._loop.call_soon_threadsafe(lambda: started[0].cancel())
            deadline = time.monotonic() + WIND_DOWN_S
            while not finished.wait(WAKE_UP_S) and time.monotonic() < deadline:
                pass
            raise
        return started[0].result()


async def _within(work: Coroutine[Any, Any, T], limit_s: float | None) -> T:
    if limit_s is None:
        return await work
    async with asyncio.timeout(limit_s):
        return await work
