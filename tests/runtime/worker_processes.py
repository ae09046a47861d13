"""Several worker processes of one instance, played by one test process: each a
`WorkerSiblings` with its own name listening on its own Unix socket in one directory, and the
`RunningTurns` that answers its siblings' requests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from app.runtime.worker_siblings import SUFFIX, WorkerSiblings
from app.slack.conversation.running_turns import RunningTurns


def socket_of(directory: Path, name: str) -> Path:
    """Where the worker called `name` listens (`{directory}/{name}.sock`)."""
    return directory / f"{name}{SUFFIX}"


@asynccontextmanager
async def workers(directory: Path, *names: str) -> AsyncIterator[tuple[RunningTurns, ...]]:
    """The named workers, listening; each one's running turns, in the order named."""
    siblings = [WorkerSiblings(directory, name=name) for name in names]
    turns = tuple(RunningTurns(each) for each in siblings)
    try:
        for each in siblings:
            await each.listen()
        yield turns
    finally:
        for each in siblings:
            await each.close()
