"""`orion` command: `orion` (auto), `orion serve` (HTTP), `orion socket` (Socket Mode), and
`orion memory show|export|forget USER_ID` for operators (app/memory_commands.py), and
`orion chat` to try Orion in a terminal, without Slack (app/terminal_chat.py)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from app.config import ConfigError, OperatorSettings, RunMode, Settings, load_settings
from app.observability.logging import get_logger
from app.observability.setup import configure_observability


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["memory"]:
        return memory(argv[1:])
    if argv[:1] == ["chat"]:
        return chat(argv[1:])
    parser = argparse.ArgumentParser(
        prog="orion", description="Orion, a Slack assistant that remembers."
    )
    parser.add_argument(
        "mode",
        nargs="?",
        choices=["serve", "socket"],
        help="serve: HTTP Events API on $PORT; socket: Socket Mode. "
        "Default: Socket Mode when SLACK_APP_TOKEN is set, else HTTP.",
    )
    args = parser.parse_args(argv)
    requested = {"serve": RunMode.HTTP, "socket": RunMode.SOCKET}.get(args.mode)
    try:
        settings = load_settings(requested)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    mode = requested or settings.default_mode()
    configure_observability(settings)
    get_logger("orion").info("orion.start", mode=mode.value, memory_backend=_backend(settings))
    run(settings, mode)
    return 0


def memory(argv: list[str]) -> int:
    from pydantic import ValidationError

    from app import memory_commands

    parser = argparse.ArgumentParser(
        prog="orion memory", description="See, export or erase what Orion keeps about a person."
    )
    memory_commands.add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        # The storage settings only: no Slack or Anthropic key is needed to read a store.
        settings = OperatorSettings()
    except ValidationError as exc:
        print(
            f"Configuration problem: {exc.error_count()} setting(s) missing or invalid "
            f"({', '.join(str(e['loc'][0]).upper() for e in exc.errors())})",
            file=sys.stderr,
        )
        return 2
    configure_observability(settings, stream=sys.stderr)  # stdout is the command's output
    return memory_commands.run(settings, args)


def chat(argv: list[str]) -> int:
    from pydantic import ValidationError

    from app import terminal_chat

    parser = argparse.ArgumentParser(
        prog="orion chat", description="Talk to Orion in this terminal, without Slack."
    )
    parser.add_argument("--user", default=terminal_chat.DEFAULT_USER, help="who you are")
    args = parser.parse_args(argv)
    try:
        # Slack is not used: a placeholder token satisfies the settings.
        settings = Settings(slack_bot_token="xoxb-not-used-in-chat")
    except ValidationError as exc:
        missing = ", ".join(str(e["loc"][0]).upper() for e in exc.errors())
        print(f"Configuration problem: {missing} missing or invalid", file=sys.stderr)
        return 2
    if "LOG_LEVEL" not in os.environ:  # the conversation, not Orion's log lines
        settings = settings.model_copy(update={"log_level": "WARNING"})
    configure_observability(settings, stream=sys.stderr)
    return terminal_chat.run(settings, args.user)


def run(settings: Settings, mode: RunMode) -> None:
    from app.runtime.heap import collect_young_objects_less_often, freeze_long_lived_objects
    from app.services import ServiceProvider

    collect_young_objects_less_often()
    provider = ServiceProvider(settings, on_ready=freeze_long_lived_objects)
    if mode is RunMode.HTTP:
        # Bolt itself is loaded after the server listens (see app/http_server.py).
        from app.http_server import build_http_app, serve_http

        serve_http(build_http_app(settings, provider), port=settings.port)
    else:
        from app.slack.app import build_bolt_app
        from app.socket_mode import run_socket_mode

        assert settings.slack_app_token is not None  # checked by load_settings
        bolt_app = build_bolt_app(settings, provider, mode=mode)
        app_token = settings.slack_app_token.get_secret_value()
        asyncio.run(run_socket_mode(bolt_app, provider, app_token=app_token))


def _backend(settings: Settings) -> str:
    return f"gcs:{settings.gcs_memories_bucket}" if settings.gcs_memories_bucket else "local"


if __name__ == "__main__":
    sys.exit(main())
