"""The `orion` command and its subcommands. What a person must fix is printed in one shape
(`problem_report`, app/config.py), exiting `EXIT_PROBLEM`, never with a traceback."""

from __future__ import annotations

import argparse
import asyncio
import difflib
import os
import re
import sys
from typing import NoReturn

from app.config import (
    ENV_HINT,
    EXIT_PROBLEM,
    EXIT_UNAVAILABLE,
    ConfigError,
    OperatorSettings,
    RunMode,
    Settings,
    StorageSettings,
    load_settings,
    problem_report,
    read_settings,
    report_problem,
)
from app.observability.logging import get_logger
from app.observability.setup import configure_observability

_SERVE = "the HTTP Events API on 0.0.0.0:$PORT (Cloud Run)"
_SOCKET = "Socket Mode, for local development (needs SLACK_APP_TOKEN)"
_CANNOT_START = "Orion cannot start"


def main(argv: list[str] | None = None) -> int:
    from app.runtime.stop_signals import EXIT_ON_SIGNAL, interrupt_on_sigterm

    interrupt_on_sigterm()
    try:
        return _command(sys.argv[1:] if argv is None else argv)
    except KeyboardInterrupt:  # stopped before serving (or in a one-off command): no drain
        return EXIT_ON_SIGNAL


def _command(argv: list[str]) -> int:
    parser = _parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said by the command's own parser: `orion chat --usr` names `orion chat`'s
        getattr(args, "command_parser", parser).refuse(unknown)
    if args.command in ("memory", "migrate"):
        return operator_command(args)
    if args.command == "chat":
        return chat(args)
    requested = {"serve": RunMode.HTTP, "socket": RunMode.SOCKET}.get(args.command)
    try:
        settings = load_settings(requested)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return EXIT_PROBLEM
    if problem := memory_dir_problem(settings):
        return report_problem(_CANNOT_START, problem, EXIT_PROBLEM, hint=ENV_HINT)
    mode = requested or settings.default_mode()
    configure_observability(settings)
    bucket = settings.gcs_memories_bucket
    backend = f"gcs:{bucket}" if bucket else "local"
    get_logger("orion").info("orion.start", mode=mode.value, memory_backend=backend)
    return run(settings, mode)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # A mistyped command or argument in one line, as every other problem: argparse's
        # usage block above it showed every option before saying what was wrong.
        hint = f"see `{self.prog} --help`"
        report = problem_report(f"{self.prog} cannot run", [message], hint=hint)
        self.exit(EXIT_PROBLEM, report + "\n")

    def refuse(self, unknown: list[str]) -> NoReturn:
        """Arguments this command does not take, with the option nearest the first one."""
        message = f"unrecognized arguments: {' '.join(unknown)}"
        options = re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", self.format_usage())
        given = next((arg.split("=")[0] for arg in unknown if arg.startswith("-")), None)
        if given and (nearest := difflib.get_close_matches(given, options, n=1)):
            message += f" (did you mean {nearest[0]}?)"
        self.error(message)


def _parser() -> _Parser:
    """Every command and its arguments, in one place: `orion --help` lists them all, and
    reading them imports nothing a server's start does not need."""
    from app.terminal_chat import DEFAULT_USER

    parser = _Parser(
        prog="orion",
        description="Orion, a Slack assistant that remembers. Without a command: Socket "
        "Mode when SLACK_APP_TOKEN is set, else HTTP. Settings come from the environment "
        "and .env (see .env.example).",
    )
    commands = parser.add_subparsers(dest="command", title="commands", metavar="[COMMAND]")
    commands.add_parser("serve", help=_SERVE, description=_SERVE)
    commands.add_parser("socket", help=_SOCKET, description=_SOCKET)
    chat_help = "talk to Orion in this terminal, without Slack (needs ANTHROPIC_API_KEY)"
    chat_parser = commands.add_parser("chat", help=chat_help, description=chat_help)
    chat_parser.add_argument(
        "--user",
        default=DEFAULT_USER,
        help=f"who you are, as a Slack user id (default: {DEFAULT_USER}, a pretend person)",
    )
    migrate_help = "move memory written by Orion up to 2026-11-28 into its owners' homes"
    commands.add_parser("migrate", help=migrate_help, description=migrate_help)
    memory_help = "see, export or erase what Orion keeps about a person (for operators)"
    memory_parser = commands.add_parser("memory", help=memory_help, description=memory_help)
    memory_parser.add_argument("action", choices=["show", "export", "forget"])
    memory_parser.add_argument("user_id", help="the person's Slack user id, e.g. U0123ABCD")
    memory_parser.add_argument("--yes", action="store_true", help="forget without asking again")
    memory_parser.add_argument(
        "--allow-empty",
        action="store_true",
        help="forget: succeed even when nothing of the person is found",
    )
    memory_parser.add_argument("--output", "-o", help="export: write to this file (mode 0600)")
    memory_parser.add_argument(
        "--force", action="store_true", help="export: replace the --output file if it exists"
    )
    memory_parser.add_argument(
        "--team",
        help="distribution mode: the person's workspace (team id, e.g. T0123ABCD); required there",
    )
    memory_parser.add_argument(
        "--enterprise",
        help="distribution mode: the workspace's Enterprise Grid organisation (E…), if any; "
        "alone (no --team) for an organisation-wide installation",
    )
    for command_parser in commands.choices.values():
        command_parser.set_defaults(command_parser=command_parser)
    return parser


def operator_command(args: argparse.Namespace) -> int:
    """`orion memory` and `orion migrate`, on the storage settings only: no Slack or Anthropic
    key is needed to read a store (the command sets up where logs go)."""
    from app import memory_commands

    migrating = args.command == "migrate"
    try:
        settings = read_settings(OperatorSettings)
    except ConfigError as exc:
        who = memory_commands.MIGRATE_WHO if migrating else memory_commands.WHO
        print(exc.report(who), file=sys.stderr)
        return EXIT_PROBLEM
    if migrating:
        return memory_commands.migrate(settings)
    return memory_commands.run(settings, args)


def chat(args: argparse.Namespace) -> int:
    from app import terminal_chat

    try:
        # Slack is not used: a stand-in bot token satisfies the settings, and no Slack
        # setting (an example value left in .env, say) can stop the chat.
        settings = read_settings(
            Settings,
            slack_bot_token="xoxb-not-used-in-chat",
            slack_signing_secret=None,
            slack_app_token=None,
        )
    except ConfigError as exc:
        print(exc.report(terminal_chat.WHO), file=sys.stderr)
        return EXIT_PROBLEM
    if problem := memory_dir_problem(settings) or next(iter(settings.tracing_problems()), None):
        return report_problem(terminal_chat.WHO, problem, EXIT_PROBLEM, hint=ENV_HINT)
    from app.terminal_chat.console import run_console

    return run_console(settings, args.user)  # it sets up where logs go


def memory_dir_problem(settings: StorageSettings) -> str | None:
    """What is wrong with MEMORY_DIR when Orion keeps its records there (no bucket), found
    before anyone talks to Orion; None when it is usable (it is created if missing)."""
    if settings.gcs_memories_bucket:
        return None
    from app.storage.local_directory import prepare_directory

    if problem := prepare_directory(settings.memory_dir):
        return f"MEMORY_DIR: {settings.memory_dir.resolve()} {problem}"
    return None


def run(settings: Settings, mode: RunMode) -> int:
    """Build everything, then serve (HTTP or Socket Mode) until stopped; the exit code.
    What stops Orion before it serves is said in one report, never a traceback."""
    from app.runtime.port import HOST, PortUnavailable, take_port

    log = get_logger("orion")
    try:
        # Before the imports that take seconds (tens, on a busy machine): a port in use
        # is said at once.
        claimed = take_port(HOST, settings.port) if mode is RunMode.HTTP else None
    except PortUnavailable as exc:
        log.error("orion.port_unavailable", port=exc.port, reason=exc.reason)
        taken = (
            f"PORT: {exc.port} is {exc.reason} (another Orion, or another program, "
            "listens on it): stop that, or set PORT to a free port"
            if exc.in_use
            else f"PORT: {exc.port} cannot be used ({exc.reason}): set PORT to another port"
        )
        return report_problem(_CANNOT_START, taken, EXIT_PROBLEM)
    import uvloop

    from app.slack.web_client import BotTokenRefused, SlackUnreachable
    from app.socket_mode import AppTokenRefused

    if claimed is not None:
        from app.http_server import serve_http

        serving = serve_http(settings, claimed)
    else:
        from app.socket_mode import serve_socket_mode

        serving = serve_socket_mode(settings)
    try:
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(serving)
            _leave_at_once()
    except BotTokenRefused as exc:
        log.error("orion.bot_token_refused", error=exc.error)
        refused = (
            f"SLACK_BOT_TOKEN: Slack refused it ({exc.error}); it must be the app's bot "
            "token (xoxb-…) from its OAuth & Permissions page, with the app installed"
        )
        return report_problem(_CANNOT_START, refused, EXIT_PROBLEM)
    except AppTokenRefused as exc:
        log.error("orion.socket_mode.token_refused", error=exc.error)
        refused = (
            f"SLACK_APP_TOKEN: Slack refused it ({exc.error}); it must be an app-level "
            "token with connections:write, from the app's Basic Information page"
        )
        return report_problem(_CANNOT_START, refused, EXIT_PROBLEM)
    except SlackUnreachable as exc:
        # Orion stops here, saying why in one line: the cause's own words, not a traceback.
        log.error("orion.slack_unreachable", error=str(exc), cause=str(exc.__cause__ or ""))
        unreachable = f"Slack's Web API at {settings.slack_api_url} did not answer ({exc})"
        return report_problem(_CANNOT_START, unreachable, EXIT_UNAVAILABLE)
    return 0


def _leave_at_once() -> NoReturn:
    """After a clean drain, exit 0 now: Python's teardown (the loop, storage threads a budget
    gave up on, every module) took seconds on a busy machine, past the stop deadline: exit 1."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
