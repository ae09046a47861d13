"""`orion` command: `orion` (auto), `orion serve` (HTTP), `orion socket` (Socket Mode)."""

from __future__ import annotations

import argparse
import asyncio
import sys

from app.config import ConfigError, RunMode, Settings, load_settings
from app.observability.logging import get_logger
from app.observability.setup import configure_observability


def main(argv: list[str] | None = None) -> int:
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
