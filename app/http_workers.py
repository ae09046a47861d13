"""Several HTTP server processes on one instance (`HTTP_WORKERS`), and how every server
process serves.

A Python process computes on one core at a time, so a burst on a 2-vCPU instance needs
two. `serve_workers` runs in the process `orion serve` starts, before anything heavy is
imported: that process only supervises, and each worker imports the stack and builds
its own app (app/http_server.py), so the sooner the workers are spawned the sooner the
instance answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import shutil
import tempfile
from typing import Any

from uvicorn.config import STARTUP_FAILURE

from app.config import EXIT_PROBLEM
from app.observability.logging import get_logger
from app.runtime.worker_siblings import DIRECTORY_VARIABLE as SIBLINGS_DIRECTORY
from app.runtime.worker_watchdog import WorkerWatchdog, stop_as_one_process_does

log = get_logger(__name__)

# What uvicorn's workers load (`worker_app`), and the app factory it builds on, which the
# parent names in the environment for them.
WORKER_APP = "app.http_workers:worker_app"
FACTORY_VARIABLE = "ORION_WORKER_APP_FACTORY"
# sockaddr_un's sun_path: 108 bytes with the terminating NUL.
MAX_SOCKET_PATH = 107
# Left in the siblings directory by a worker that could not build its app.
START_FAILED = "start-failed"

HOST = "0.0.0.0"
# How every Orion server process serves, alone or as one of several workers.
SERVER_OPTIONS: dict[str, Any] = {
    "log_config": None,  # keep Orion's structured logging
    "access_log": False,
    # Orion never reads the client's address, so the X-Forwarded-* rewriting middleware
    # would only add work to every request.
    "proxy_headers": False,
    "timeout_graceful_shutdown": 8,
    "lifespan": "on",
}


def serve_workers(factory: str, *, count: int, port: int) -> int:
    """`count` server processes on one listening socket, each building its own app with
    `factory` ("module:function"); the exit code. uvicorn's own supervisor (its public
    `workers`) spawns them, replaces one that dies, and on SIGTERM or SIGINT stops each
    gracefully and waits for it. The workers reach each other through a directory only
    this user can enter (app/runtime/worker_siblings.py), removed when they are gone."""
    import uvicorn

    siblings = tempfile.mkdtemp(prefix="orion-workers-", dir=_short_temporary_directory())
    # Spawned workers inherit the environment.
    os.environ[SIBLINGS_DIRECTORY] = siblings
    os.environ[FACTORY_VARIABLE] = factory
    log.info("orion.workers.start", workers=count)
    try:
        uvicorn.run(WORKER_APP, factory=True, workers=count, host=HOST, port=port, **SERVER_OPTIONS)
        failed = os.path.exists(os.path.join(siblings, START_FAILED))
    finally:
        del os.environ[SIBLINGS_DIRECTORY], os.environ[FACTORY_VARIABLE]
        shutil.rmtree(siblings, ignore_errors=True)
    if failed:
        # uvicorn's supervisor stops once a worker fails to start, as every worker would.
        log.error("orion.workers.start_failed")
        return EXIT_PROBLEM
    log.info("orion.workers.stopped")
    return 0


def _short_temporary_directory() -> str:
    """The temporary directory (TMPDIR), unless the workers' sockets would not fit in it:
    a Unix socket's path is at most 107 bytes."""
    directory = tempfile.gettempdir()
    room = len(os.path.join(directory, "orion-workers-XXXXXXXX", "4194304.sock").encode())
    return directory if room <= MAX_SOCKET_PATH else "/tmp"


def worker_app() -> Any:
    """Each worker's app, built as uvicorn loads it, in the worker's event loop: the
    factory's, with what a worker needs beyond one process (app/runtime/
    worker_watchdog.py). A worker that cannot build it exits as uvicorn's supervisor
    understands "failed to start" (rather than as "died", which it would start again and
    again), and leaves a mark for the parent's exit code."""
    try:
        module, _, name = os.environ[FACTORY_VARIABLE].partition(":")
        app = getattr(importlib.import_module(module), name)()
        # Both rely on uvicorn building the app in the worker's main thread, in its loop,
        # after installing its signal handlers: tests/e2e/test_http_workers.py fails if an
        # upgrade changes that (here, a start failure rather than a worker unwatched).
        WorkerWatchdog(asyncio.get_running_loop()).start()
        stop_as_one_process_does()
    except BaseException as exc:  # SystemExit too: a settings problem the factory reported
        log.error("orion.worker.start_failed", exc_info=exc)
        with contextlib.suppress(OSError):
            open(os.path.join(os.environ[SIBLINGS_DIRECTORY], START_FAILED), "w").close()
        raise SystemExit(STARTUP_FAILURE) from exc
    return app
