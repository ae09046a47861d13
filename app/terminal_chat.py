"""`orion chat`: talk to Orion in a terminal, no Slack needed.

The same agent, memory tool, recall and turn-end learning as in Slack, on the local memory
directory by default, as a pretend person (`--user`, default U0TERMINAL) in one pretend
thread. The answer streams as Claude writes it. Ctrl-D ends the conversation (after the
last turn's summary is written) and says where the memories are. A newcomer with only
ANTHROPIC_API_KEY sees what Orion does in a minute.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import TextIO

from app.config import Settings, problem_report
from app.memory.scopes import user_prefix, validate_user_id
from app.observability.logging import get_logger
from app.services import build_services, build_storage

log = get_logger(__name__)

DEFAULT_USER = "U0TERMINAL"
# What the chat's error messages start with (app/config.py's problem_report).
WHO = "orion chat cannot start"
CHANNEL = "D0TERMINAL"  # a pretend DM: thread contexts and links need a channel id
PROMPT = "you> "


class TerminalReply:
    """The agent's ReplySink: the answer streams to the terminal, statuses go dim."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    async def append(self, markdown: str) -> None:
        self._out.write(markdown)
        self._out.flush()

    async def show_progress(self, status: str) -> None:
        self._out.write(f"\n  ({status})\n")
        self._out.flush()


def run(
    settings: Settings,
    user_id: str,
    *,
    read_line: Callable[[], str] = input,
    out: TextIO = sys.stdout,
) -> int:
    try:
        validate_user_id(user_id)
    except ValueError:
        problem = f"--user: not a Slack user id (like U0123ABCD): {user_id!r}"
        print(problem_report(WHO, [problem], hint=None), file=sys.stderr)
        return 2
    return asyncio.run(_chat(settings, user_id, read_line, out))


async def _chat(settings: Settings, user_id: str, read_line: Callable[[], str], out: TextIO) -> int:
    from app.agent.errors import friendly_error
    from app.agent.history import ThreadMessage
    from app.agent.request import TurnRequest

    storage = build_storage(settings)
    await storage.store.connect()
    out.write("Orion is starting…\n")
    services = await asyncio.to_thread(build_services, settings, storage)
    agent = services.agent
    thread_ts = f"{int(time.time())}.000001"
    history: list[ThreadMessage] = []
    learning: list[asyncio.Task[None]] = []
    out.write(f"Talking to Orion as {user_id}. Ctrl-D to finish.\n\n")
    try:
        while True:
            out.write(PROMPT)
            out.flush()
            try:
                text = (await asyncio.to_thread(read_line)).strip()
            except EOFError:
                break
            if not text:
                continue
            learning.append(
                asyncio.create_task(
                    agent.capture_preferences(user_id, text, channel=CHANNEL, thread_ts=thread_ts)
                )
            )
            history.append(ThreadMessage("user", text))
            turn = TurnRequest(
                user_id=user_id, channel_id=CHANNEL, thread_ts=thread_ts, history=list(history)
            )
            out.write("orion> ")
            try:
                result = await agent.answer(turn, TerminalReply(out))
            except Exception as exc:  # the conversation goes on, as in Slack
                log.warning("chat.turn.failed", error=type(exc).__name__, exc_info=exc)
                out.write(f"\n{friendly_error(exc)}\n\n")
                continue
            out.write("\n\n")
            history.append(ThreadMessage("assistant", result.text))
            learning.append(asyncio.create_task(agent.after_turn(turn, result.text)))
    finally:
        if learning:
            out.write("\nSaving what this conversation taught Orion…\n")
            await asyncio.gather(*learning, return_exceptions=True)
        await services.claude.close()
        await storage.store.close()
    where = (
        f"gs://{settings.gcs_memories_bucket}/{user_prefix(user_id)}"
        if settings.gcs_memories_bucket
        else str(settings.memory_dir.resolve() / user_prefix(user_id))
    )
    out.write(f"Memories about {user_id} are in {where}\n")
    return 0
