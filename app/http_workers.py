"""Several HTTP server processes on one instance (`HTTP_WORKERS`), and how every server
process serves.

A Python process computes on one core at a time, so a burst on a 2-vCPU instance needs
two. `serve_workers` runs in the process `orion serve` starts, before anything heavy is
imported: that process only supervises, and each worker imports the stack and builds
its own app (app/http_server.py), so the sooner the workers are spawned the sooner the
instance answers.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from app.observability.logging import get_logger
from app.runtime.worker_siblings import DIRECTORY_VARIABLE as SIBLINGS_DIRECTORY

log = get_logger(__name__)

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


def serve_workers(factory: str, *, count: int, port: int) -> None:
    """`count` server processes on one listening socket, each building its own app with
    `factory` ("module:function"). uvicorn's own supervisor (its public `workers`) spawns
    them, replaces one that dies, and on SIGTERM or SIGINT stops each gracefully and waits
    for it. The workers reach each other through a directory only this user can enter
    (app/runtime/worker_siblings.py), removed when they are gone."""
    import uvicorn

    siblings = tempfile.mkdtemp(prefix="orion-workers-")
    os.environ[SIBLINGS_DIRECTORY] = siblings  # spawned workers inherit the environment
    log.info("orion.workers.start", workers=count)
    try:
        uvicorn.run(factory, factory=True, workers=count, host=HOST, port=port, **SERVER_OPTIONS)
    finally:
        del os.environ[SIBLINGS_DIRECTORY]
        shutil.rmtree(siblings, ignore_errors=True)
    log.info("orion.workers.stopped")
