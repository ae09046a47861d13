"""`orion memory show|export|forget USER_ID`: a person's memory, for requests that reach an
operator outside Slack (an email to privacy@, a departing employee).

The same learning-layer code the Home tab uses: the inventory, its document, and the
erasure. `forget` asks for the user id again before it deletes anything, unless `--yes`.
The person's DM with Orion (whose saved thread contexts hold copies of their memory) is
`--dm`, or looked up with Slack's `conversations.open` when a bot token is configured.
Each command prints what it found or removed, and logs counts only, never content.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from app.config import Settings
from app.learning.erasure import forget_everything
from app.learning.memory_document import render_memory
from app.learning.memory_inventory import take_inventory
from app.memory.scopes import validate_user_id
from app.observability import tracing
from app.observability.logging import get_logger
from app.services import build_storage

log = get_logger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["show", "export", "forget"])
    parser.add_argument("user_id", help="the person's Slack user id, e.g. U0123ABCD")
    parser.add_argument("--yes", action="store_true", help="forget without asking again")
    parser.add_argument("--dm", help="the person's DM channel with Orion (else looked up)")
    parser.add_argument("--output", "-o", help="export: write to this file, not stdout")


def run(
    settings: Settings,
    args: argparse.Namespace,
    *,
    out: TextIO = sys.stdout,
    ask: Callable[[str], str] = input,
) -> int:
    try:
        user_id = validate_user_id(args.user_id)
    except ValueError:
        print(f"Not a Slack user id: {args.user_id!r}", file=sys.stderr)
        return 2
    return asyncio.run(_run(settings, args, user_id, out, ask))


async def _run(
    settings: Settings,
    args: argparse.Namespace,
    user_id: str,
    out: TextIO,
    ask: Callable[[str], str],
) -> int:
    store = build_storage(settings).store
    try:
        if args.action == "show":
            inventory = await take_inventory(store, user_id, conversations=None)
            out.write(render_memory(inventory, full=False))
            log.info("memory.show", via="cli", **inventory.counts())
        elif args.action == "export":
            inventory = await take_inventory(store, user_id, full=True, conversations=None)
            document = render_memory(inventory, full=True)
            if args.output:
                await asyncio.to_thread(Path(args.output).write_text, document, "utf-8")
                out.write(f"Wrote {len(document)} characters to {args.output}\n")
            else:
                out.write(document)
            log.info("memory.export", via="cli", **inventory.counts())
        else:
            if not args.yes:
                typed = ask(f"This erases everything Orion keeps about {user_id}. Type the id: ")
                if typed.strip() != user_id:
                    out.write("Not confirmed: nothing was deleted.\n")
                    return 1
            dm = args.dm or await _dm_channel(settings, user_id)
            report = await forget_everything(store, user_id, dm_channels=(dm,) if dm else ())
            kinds = ", ".join(f"{kind}: {n}" for kind, n in sorted(report.deleted.items()))
            out.write(f"Deleted {report.total} objects ({kinds}).\n")
            if not dm:
                out.write("No DM channel known: saved thread contexts not in the index remain.\n")
            if settings.tracing_enabled:
                out.write(_langfuse_outcome(await _forget_traces(settings, user_id)))
            log.info("memory.forget", via="cli", kind="everything", **report.deleted)
    finally:
        await store.close()
    return 0


async def _forget_traces(settings: Settings, user_id: str) -> int | None:
    """The person's Langfuse traces deleted (None when Langfuse could not be asked)."""
    assert settings.langfuse_public_key and settings.langfuse_secret_key
    tracing.configure_tracing(
        public_key=settings.langfuse_public_key.get_secret_value(),
        secret_key=settings.langfuse_secret_key.get_secret_value(),
        base_url=settings.langfuse_base_url,
    )
    try:
        return await tracing.forget_person_traces(user_id)
    finally:
        tracing.shutdown()


def _langfuse_outcome(deleted: int | None) -> str:
    if deleted is None:
        return "Langfuse traces were NOT deleted: Langfuse could not be reached (see the log).\n"
    return f"Deleted {deleted} Langfuse traces.\n"


async def _dm_channel(settings: Settings, user_id: str) -> str | None:
    """The person's DM with Orion, from Slack; None when Slack can't say."""
    from app.slack.web_client import build_web_client

    client = build_web_client(
        token=settings.slack_bot_token.get_secret_value(), base_url=settings.slack_api_url
    )
    try:
        response = await client.conversations_open(users=user_id)
        return str(response["channel"]["id"])
    except Exception as exc:  # the erasure goes on with the channels the index knows
        log.warning("memory.forget.dm_lookup_failed", error=type(exc).__name__, exc_info=exc)
        return None
    finally:
        if client.session is not None:
            await client.session.close()
