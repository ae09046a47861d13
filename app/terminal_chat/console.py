"""The terminal side of `orion chat`: the prompt, Ctrl-C, and the farewell (README.md, "Try
it"). The main thread waits for the person — for a line, or for an answer to finish — so
that Ctrl-C reaches it as KeyboardInterrupt wherever it waits; the conversation runs on a
background loop (app/terminal_chat/background_loop.py). `/help`, `/undo` and `/quit` are
the chat's own commands, never sent to Claude. Ctrl-C while Orion answers stops that;
Ctrl-C at an empty prompt, twice in a row, or Ctrl-D ends the conversation after saving
what it taught Orion (Ctrl-C again skips the saving); SIGTERM ends it at once. A key
Claude refuses ends it with what to fix (exit code 2). Orion's log lines go to
`.orion/chat.log`: the terminal is the conversation's."""

from __future__ import annotations

import re
import signal
import sys
from pathlib import Path
from typing import TextIO

from app.config import ENV_HINT, EXIT_PROBLEM, EXIT_UNAVAILABLE, Settings, quoted, report_problem
from app.learning.memory_note import file_name, shown_lines
from app.learning.undo import UNAVAILABLE, outcome_text
from app.memory.scopes import validate_user_id
from app.observability.logging import get_logger
from app.observability.setup import log_to_file
from app.runtime.stop_signals import StopSignals
from app.storage.store import StoreError
from app.store_problems import store_problem
from app.terminal_chat import WHO
from app.terminal_chat.background_loop import BackgroundLoop
from app.terminal_chat.conversation import Conversation, Folder, KeyRefused
from app.terminal_chat.line_input import LineReader
from app.terminal_chat.terminal_reply import TerminalReply, printable

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
        out.write(_farewell(user_id, written))
    return code


def _store_unusable(settings: Settings, error: StoreError) -> int:
    """The bucket cannot be used at all: one line saying why and what to do."""
    log.error("chat.store_unusable", error=type(error).__name__, exc_info=error)
    problem, code = store_problem(settings, error) or (
        f"{settings.store_location()} failed ({type(error).__name__}; details in {LOG_FILE})",
        EXIT_UNAVAILABLE,
    )
    return report_problem(WHO, problem, code)


def _farewell(user_id: str, folders: list[Folder]) -> str:
    lines = "".join(f"  {folder.location}  ({folder.holds})\n" for folder in folders)
    return f"Memories about {user_id} are in:\n{lines}"


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
        except KeyRefused as refused:
            log.error(
                "chat.key_refused",
                status=refused.status,
                error_type=refused.error_type,
                exc_info=refused,
            )
            out.write("\n")
            out.flush()
            problem = (
                f"ANTHROPIC_API_KEY: Claude refused it ({refused.status} {refused.error_type}); "
                "create a key at console.anthropic.com and set it"
            )
            return report_problem("orion chat stopped", problem, EXIT_PROBLEM, hint=ENV_HINT)
        except Exception as exc:  # the conversation goes on, as in Slack
            from app.agent.errors import friendly_error

            log.warning("chat.turn.failed", error=type(exc).__name__, exc_info=exc)
            out.write(f"\n{friendly_error(exc)}\n\n")
            continue
        out.write("\n\n")


def _help() -> str:
    lines = "".join(f"  {name:<7}{what}\n" for name, what in COMMANDS.items())
    return (
        f"{lines}Anything else goes to Orion; a paste of several lines is one message. "
        "Ctrl-C stops an answer; Ctrl-D ends the conversation.\n\n"
    )


async def _answer(conversation: Conversation, text: str, out: TextIO) -> None:
    """The answer, as it streams; raises KeyRefused. A turn that fails otherwise is said
    in the answer's place (after what was shown of it), and the conversation goes on."""
    from app.agent.errors import friendly_error

    async with TerminalReply(out, prefix=ORION) as reply:
        try:
            await conversation.answer(text, reply)
        except KeyRefused:
            raise
        except Exception as exc:  # as in Slack
            log.warning("chat.turn.failed", error=type(exc).__name__, exc_info=exc)
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
        log.warning("chat.undo.failed", error=type(exc).__name__, exc_info=exc)
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
        log.warning("chat.close.failed", error=type(exc).__name__, exc_info=exc)


def _folders_written(loop: BackgroundLoop, conversation: Conversation) -> list[Folder]:
    try:
        return loop.run(conversation.folders_written(), timeout=CLOSE_TIMEOUT_S)
    except (KeyboardInterrupt, Terminated, TimeoutError):
        return []


_stops = StopSignals(lambda: None)


def _raise_terminated(signum: int, _frame: object) -> None:
    _stops.handle(signum)  # a second one, or the deadline, ends the process at once
    raise Terminated
