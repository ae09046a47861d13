"""`orion migrate`: move what Orion wrote up to 2026-11-28 into its owners' homes, now
(app/learning/upgrade.py), and say what moved. Every start of Orion does the same in the
background; this runs it by hand — before sending traffic to a new revision, or to check
that nothing is left (docs/operations.md, "Upgrading"). Safe to run again, and beside a
running Orion. Reads only the storage settings (OperatorSettings), like `orion memory`.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TextIO

from app.config import OperatorSettings, report_problem
from app.observability.logging import get_logger
from app.observability.setup import log_to_file
from app.services import build_storage, whole_store
from app.storage.store import StoreError

log = get_logger(__name__)

WHO = "orion migrate stopped"
LOG_FILE = Path(".orion/migrate.log")
DONE = 0
STORE_FAILED = 4  # as `orion memory`'s


def run(settings: OperatorSettings, *, out: TextIO = sys.stdout) -> int:
    log_file = log_to_file(settings, LOG_FILE)
    details = f"details in {log_file}" if log_file else "the log above has the details"
    out.write(f"Memory store: {settings.store_location()}\n")
    return asyncio.run(_run(settings, out, details))


async def _run(settings: OperatorSettings, out: TextIO, details: str) -> int:
    from app.learning.upgrade import upgrade

    storage = build_storage(settings)
    try:
        report = await upgrade(whole_store(storage, settings))
    except StoreError as exc:
        log.error("memory.upgrade.failed", exc_info=exc)
        problem = (
            f"the store {settings.store_location()} failed ({type(exc).__name__}; {details}); "
            "what moved stays moved: run the command again"
        )
        return report_problem(WHO, problem, STORE_FAILED)
    finally:
        await storage.store.close()
    if not report.found:
        out.write("Nothing of the earlier layout is left: nothing to move.\n")
        return DONE
    moved = ", ".join(f"{kind}: {n}" for kind, n in sorted(report.moved.items())) or "nothing"
    out.write(f"Moved home: {moved}. Deleted {report.deleted} old objects.\n")
    if report.unreadable:
        out.write(
            f"{report.unreadable} old objects could not be read and were left where they are "
            f"({details}).\n"
        )
    return DONE
