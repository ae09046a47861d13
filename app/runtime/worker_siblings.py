"""The other worker processes of this instance: asked to stop a conversation's turn, and
counted when readiness asks whether all of them are ready.

With `HTTP_WORKERS` above 1 (`serve_workers`, app/http_workers.py) the kernel hands each
connection to whichever worker accepts it first, so agent_view's Stop for a conversation
can reach a worker other than the one answering it; running turns are known only in the
memory of the worker running them (app/slack/conversation/running_turns.py). So each
worker listens on a Unix socket, `{directory}/{pid}.sock`, in a directory only this
instance's user can enter (made by the parent with `mkdtemp`, mode 0700, removed when it
stops), and a worker that finds no turn to stop asks the others, all at once, each within
`ASK_TIMEOUT_S`; the first that stopped it ends the wait.

The exchange is one line each way: `{"stop": [channel, thread_ts]}` and
`{"stopped": true|false}`. A line not of that shape is answered `false`, one longer than
`MAX_LINE` not at all, and the connection closed; a sibling that is gone (its socket file
left behind) or does not answer in time counts as not stopping it.

Cloud Run's startup probe (`GET /readyz`) reaches one worker, which could pass it while the
other is still building its services, and Cloud Run would then send people to it. So a
worker whose own checks pass leaves `{directory}/{pid}.ready`, holding its pid, and
/readyz counts the markers of the workers still alive (app/readiness.py): the instance is
ready when all `HTTP_WORKERS` are. A worker that is killed leaves its marker behind; its
pid, no longer running, does not count.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from app.observability.logging import get_logger

log = get_logger(__name__)

# Set by the parent for its workers (spawned processes inherit the environment).
DIRECTORY_VARIABLE = "ORION_WORKER_SIBLINGS_DIR"
# A Stop that no sibling stops waits this long for the slowest before it sets the session
# back to `active` itself; a worker whose loop is that busy is not answering anyone anyway.
ASK_TIMEOUT_S = 1.0
# A conversation's ids are a few dozen characters; anything longer is not a Stop.
MAX_LINE = 1024
MAX_ID = 64
SUFFIX = ".sock"
READY_SUFFIX = ".ready"
# A marker holds a pid; anything longer was not written by a worker.
MAX_MARKER = 32
PID_MAX = 2**22  # Linux's ceiling (/proc/sys/kernel/pid_max)

StopHere = Callable[[str, str], bool]


class WorkerSiblings:
    def __init__(self, directory: Path, *, name: str | None = None) -> None:
        self._directory = directory
        self._path = directory / f"{name or os.getpid()}{SUFFIX}"
        self._ready_marker = directory / f"{name or os.getpid()}{READY_SUFFIX}"
        self._stop_here: StopHere | None = None
        self._server: asyncio.AbstractServer | None = None

    @classmethod
    def from_environment(cls) -> WorkerSiblings | None:
        """This worker's siblings; None when the process serves alone."""
        directory = os.environ.get(DIRECTORY_VARIABLE)
        return cls(Path(directory)) if directory else None

    def answer_with(self, stop_here: StopHere) -> None:
        """What a sibling's request runs: cancel the turn if it runs here."""
        self._stop_here = stop_here

    async def listen(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path.unlink()  # left by a worker of the same pid that died
        self._server = await asyncio.start_unix_server(
            self._answer, path=str(self._path), limit=MAX_LINE
        )
        log.info("orion.worker.listening_for_siblings")

    def mark_ready(self) -> None:
        """Say that this worker's own checks pass (written whole, then renamed into place,
        so that a count never reads half a marker)."""
        partial = self._ready_marker.with_suffix(".partial")
        partial.write_text(str(os.getpid()))
        partial.replace(self._ready_marker)

    def ready_workers(self) -> int:
        """How many workers of the instance, this one included, have said they are ready
        and still run. Raises OSError when the directory cannot be read."""
        return sum(_alive(marker) for marker in self._directory.glob(f"*{READY_SUFFIX}"))

    async def close(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._ready_marker.unlink()
        if self._server is None:
            return
        self._server.close()
        with contextlib.suppress(FileNotFoundError):
            self._path.unlink()
        await self._server.wait_closed()
        self._server = None

    async def stop_elsewhere(self, channel: str, thread_ts: str) -> bool:
        """Ask every sibling to stop the conversation's turn; True when one did."""
        paths = [p for p in self._directory.glob(f"*{SUFFIX}") if p != self._path]
        if not paths:
            return False
        line = json.dumps({"stop": [channel, thread_ts]}).encode() + b"\n"
        asks = [asyncio.ensure_future(_ask(path, line)) for path in paths]
        try:
            # The first sibling that stopped it answers for all: a slow one is not waited for.
            for answer in asyncio.as_completed(asks):
                if await answer:
                    return True
            return False
        finally:
            for ask in asks:
                ask.cancel()
            await asyncio.gather(*asks, return_exceptions=True)

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        stopped = False
        try:
            line = await asyncio.wait_for(reader.readline(), ASK_TIMEOUT_S)
            stopped = self._stop_asked(line)
            writer.write(json.dumps({"stopped": stopped}).encode() + b"\n")
            await writer.drain()
        except (ValueError, TimeoutError, ConnectionError) as exc:
            # Too long a line (ValueError), too slow or gone: nothing to stop.
            log.warning(
                "orion.worker.sibling_request_refused", error=type(exc).__name__, exc_info=True
            )
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    def _stop_asked(self, line: bytes) -> bool:
        """Run a sibling's request; False for a line that is not a Stop."""
        try:
            conversation = _conversation(line)
        except (ValueError, RecursionError) as exc:
            # RecursionError: a short line nested deeper than the parser recurses, which
            # would otherwise escape the handler, unanswered and unlogged by Orion.
            log.warning(
                "orion.worker.sibling_request_refused",
                size=len(line),
                error=type(exc).__name__,
                exc_info=True,
            )
            return False
        if conversation is None:
            log.warning("orion.worker.sibling_request_refused", size=len(line))
            return False
        stopped = self._stop_here is not None and self._stop_here(*conversation)
        if stopped:
            log.info("slack.turn.stopped_for_a_sibling")
        return stopped


async def _ask(path: Path, line: bytes) -> bool:
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(ASK_TIMEOUT_S):
            reader, writer = await asyncio.open_unix_connection(str(path), limit=MAX_LINE)
            writer.write(line)
            await writer.drain()
            answer = json.loads(await reader.readline())
        return isinstance(answer, dict) and answer.get("stopped") is True
    except (OSError, TimeoutError, ValueError, RecursionError) as exc:
        # OSError: a socket left by a worker that died (refused) or went meanwhile.
        # RecursionError: an answer nested deeper than the parser recurses.
        log.info("orion.worker.sibling_unanswered", error=type(exc).__name__, exc_info=True)
        return False
    finally:
        if writer is not None:
            writer.close()


def _alive(marker: Path) -> bool:
    """Whether the worker that left `marker` still runs (False for what is not a marker)."""
    try:
        with marker.open("rb") as file:
            pid = int(file.read(MAX_MARKER))
    except (OSError, ValueError):
        return False  # gone meanwhile, or not a pid
    if not 0 < pid <= PID_MAX:  # 0 and negatives would name a process group, or all
        return False
    try:
        os.kill(pid, 0)  # signal 0: nothing is sent, only whether the process exists
    except PermissionError:
        return True  # it exists, run by another user
    except OSError:
        return False
    return True


def _conversation(line: bytes) -> tuple[str, str] | None:
    """The conversation a Stop names; None for JSON of any other shape. Raises what
    `json.loads` raises for a line that is not JSON."""
    request = json.loads(line)
    ids = request.get("stop") if isinstance(request, dict) else None
    if (
        isinstance(ids, list)
        and len(ids) == 2
        and all(isinstance(i, str) and 0 < len(i) <= MAX_ID for i in ids)
    ):
        return ids[0], ids[1]
    return None
