"""`orion memory show|export|forget USER_ID` (docs/operations.md, "Operator commands") and `orion
migrate` ("Upgrading"), with the Home tab's code. An operator must never be told a person was
erased when nothing was: each names its store, and an erasure finding nothing fails."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TextIO

from app.config import EXIT_PROBLEM, OperatorSettings, quoted, report_problem
from app.learning.erasure import forget_everything
from app.learning.memory_document import render_memory, shortened
from app.learning.memory_inventory import take_inventory
from app.learning.upgrade import upgrade
from app.memory.key_prefixes import INSTALLATIONS
from app.memory.scopes import validate_user_id
from app.observability import tracing
from app.observability.logging import get_logger
from app.observability.setup import log_to_file
from app.services import build_storage, whole_store
from app.storage.owner_only_files import replace_file
from app.storage.store import AccessDenied, BucketNotFound, NoCredentials, ObjectStore, StoreError
from app.storage.team_scope import InvalidTenant, Tenant, bound_tenant
from app.store_problems import store_problem

log = get_logger(__name__)

# What the command's error messages start with (app/config.py's problem_report).
WHO = "orion memory cannot run"
MIGRATE_WHO = "orion migrate stopped"
LOG_FILE = Path(".orion/memory.log")
MIGRATE_LOG_FILE = Path(".orion/migrate.log")

# Exit codes, so that a script can tell what happened (also app/store_problems.py: 2 for a
# bucket that does not exist, no credentials or no access; 69 when storage did not answer).
DONE = 0
NOT_CONFIRMED = 1
# A bad user id or workspace, a store that is not there, an export file that can't be written
# (or that exists, without --force).
BAD_INPUT = EXIT_PROBLEM
NOTHING_FOUND = 3  # an erasure found nothing (without --allow-empty)
STORE_FAILED = 4  # also `orion migrate`'s
# An erasure that ran but may have left something: Langfuse could not be reached for the
# person's traces.
INCOMPLETE = 5


def run(
    settings: OperatorSettings,
    args: argparse.Namespace,
    *,
    out: TextIO = sys.stdout,
    ask: Callable[[str], str] = input,
) -> int:
    details = log_to_file(settings, LOG_FILE)  # the terminal is for the outcome
    try:
        user_id = validate_user_id(args.user_id)
    except ValueError:
        problem = f"USER_ID: not a Slack user id (like U0123ABCD): {quoted(args.user_id)}"
        return report_problem(WHO, problem, BAD_INPUT)
    try:
        tenant = _tenant(settings, args)
    except ValueError as exc:
        return report_problem(WHO, str(exc), BAD_INPUT)
    location = settings.store_location()
    if missing := _no_directory(settings, "nothing was read or deleted"):
        return report_problem(WHO, missing, BAD_INPUT)
    # The export's document may be stdout itself: then the store is named on stderr.
    report = sys.stderr if args.action == "export" and not args.output else out
    report.write(f"Memory store: {location}\n")
    if tenant is not None:
        report.write(f"Workspace: {tenant.segment}\n")
    # Absolute, for the same reason as the store's: the operator sees where it went.
    output = os.path.abspath(args.output) if args.output else None
    if output and not args.force and os.path.lexists(output):
        # Checked before the store is read; the write itself refuses too (a file made
        # meanwhile is not replaced either).
        return report_problem(WHO, _exists(output), BAD_INPUT)
    if tenant is None:
        return asyncio.run(_run(settings, args, user_id, output, out, ask, details))
    with bound_tenant(tenant):  # every store operation of the command: this workspace's
        return asyncio.run(_run(settings, args, user_id, output, out, ask, details))


def _no_directory(settings: OperatorSettings, outcome: str) -> str | None:
    """A MEMORY_DIR that is not there, as a relative one is when read from elsewhere than
    Orion runs: said, never taken for an empty store."""
    if settings.gcs_memories_bucket or settings.memory_dir.is_dir():
        return None
    return (
        f"MEMORY_DIR: no directory at {settings.store_location()}, so {outcome}; run "
        "from where Orion runs, or set MEMORY_DIR to an absolute path"
    )


def _exists(output: str) -> str:
    return f"--output: {output} exists; pass --force to replace it"


def _tenant(settings: OperatorSettings, args: argparse.Namespace) -> Tenant | None:
    """The workspace the command acts in (distribution mode), None outside it."""
    team, enterprise = getattr(args, "team", None), getattr(args, "enterprise", None)
    if not settings.keys_per_team:
        if team or enterprise:
            raise ValueError(
                "--team: only in distribution mode (SLACK_CLIENT_ID set, SLACK_BOT_TOKEN "
                "unset); this store's keys are one workspace's"
            )
        return None
    if not team and not enterprise:
        raise ValueError(
            "--team: required in distribution mode: the person's workspace (T…), as a user "
            "id names a person only within one"
        )
    try:
        return Tenant(enterprise or None, team or None)
    except InvalidTenant as exc:
        raise ValueError(f"--team/--enterprise: {exc} (like T0123ABCD / E0123ABCD)") from None


async def _run(
    settings: OperatorSettings,
    args: argparse.Namespace,
    user_id: str,
    output: str | None,
    out: TextIO,
    ask: Callable[[str], str],
    details: str,
) -> int:
    """`details`: where the log lines are, for a message that points there."""
    store = build_storage(settings).store
    try:
        # The first request says whether the bucket can be used at all (nothing is done
        # before it): no credentials, no such bucket, not allowed, no answer.
        await store.connect()
        # (A distribution deployment's store is checked by the command's own first read.)
        installations = [] if settings.keys_per_team else await store.list(INSTALLATIONS.prefix)
    except StoreError as exc:
        await store.close()
        log.error("memory.command.store_unusable", action=args.action, exc_info=exc)
        problem, code = store_problem(settings, exc) or (
            f"{_store_variable(settings)}: the store {settings.store_location()} failed "
            f"({type(exc).__name__}; {details}) before anything was read; run the command "
            "again",
            STORE_FAILED,
        )
        return report_problem(WHO, problem, code)
    try:
        if installations:
            # A distribution store with single-workspace settings: every person is under a
            # workspace's keys, so this would report nothing.
            problem = (
                f"{_store_variable(settings)}: {settings.store_location()} holds workspaces' "
                "installations (distribution mode): set SLACK_CLIENT_ID, unset "
                "SLACK_BOT_TOKEN, and pass --team"
            )
            return report_problem(WHO, problem, BAD_INPUT)
        if args.action == "show":
            return await _show(store, user_id, out)
        if args.action == "export":
            return await _export(store, user_id, output, out, replace=args.force)
        return await _forget(settings, store, args, user_id, out, ask, details)
    except StoreError as exc:
        log.error("memory.command.store_failed", action=args.action, exc_info=exc)
        if isinstance(exc, BucketNotFound | NoCredentials | AccessDenied):
            problem, code = store_problem(settings, exc) or ("", STORE_FAILED)
            return report_problem(WHO, problem, code)  # nothing could be read or deleted
        problem = (
            f"{_store_variable(settings)}: the store {settings.store_location()} failed "
            f"({type(exc).__name__}; {details}), so the {args.action} may be partly done; "
            "run the command again"
        )
        return report_problem("orion memory stopped", problem, STORE_FAILED)
    finally:
        await store.close()


def _store_variable(settings: OperatorSettings) -> str:
    return "GCS_MEMORIES_BUCKET" if settings.gcs_memories_bucket else "MEMORY_DIR"


async def _show(store: ObjectStore, user_id: str, out: TextIO) -> int:
    inventory = await take_inventory(store, user_id, conversations=None)
    out.write(render_memory(inventory, full=False))
    if shortened(inventory):
        out.write(f"(… marks where a note or summary goes on: `export {user_id}` has it all.)\n")
    log.info("memory.show", via="cli", **inventory.counts())
    return DONE


async def _export(
    store: ObjectStore, user_id: str, output: str | None, out: TextIO, *, replace: bool
) -> int:
    inventory = await take_inventory(store, user_id, full=True, conversations=None)
    document = render_memory(inventory, full=True)
    if output:
        # Created owner-only (0600, from its first byte) and written whole: the file holds
        # everything Orion keeps about a person.
        data = document.encode("utf-8")
        write = partial(replace_file, output, data, modified_ns=time.time_ns(), replace=replace)
        try:
            await asyncio.to_thread(write)
        except FileExistsError:
            return report_problem(WHO, _exists(output), BAD_INPUT)
        except OSError as exc:
            log.error("memory.export.write_failed", exc_info=exc)
            reason = exc.strerror or type(exc).__name__
            problem = f"--output: could not write {output} ({reason})"
            return report_problem(WHO, problem, BAD_INPUT)
        out.write(f"Wrote {len(document)} characters to {output}\n")
    else:
        out.write(document)
    log.info("memory.export", via="cli", **inventory.counts())
    return DONE


async def _forget(
    settings: OperatorSettings,
    store: ObjectStore,
    args: argparse.Namespace,
    user_id: str,
    out: TextIO,
    ask: Callable[[str], str],
    details: str,
) -> int:
    if not args.yes:
        try:
            typed = ask(f"This erases everything Orion keeps about {user_id}. Type the id: ")
        except EOFError:  # no terminal to answer from (a script, Ctrl-D)
            typed = ""
            out.write("\n")
        if typed.strip() != user_id:
            out.write("Not confirmed: nothing was deleted (--yes skips the question).\n")
            return NOT_CONFIRMED
    report = await forget_everything(store, user_id)
    log.info("memory.forget", via="cli", kind="everything", **report.deleted)
    code = DONE if report.total or args.allow_empty else NOTHING_FOUND
    if report.total:
        kinds = ", ".join(f"{kind}: {n}" for kind, n in sorted(report.deleted.items()))
        out.write(f"Deleted {_count(report.total, 'object')} ({kinds}).\n")
    else:
        out.write(f"Found nothing of {user_id} in {settings.store_location()}: nothing deleted.\n")
    if settings.tracing_enabled:
        deleted = await _forget_traces(settings, user_id)
        if deleted is None:
            out.write(
                f"Langfuse traces were NOT deleted: Langfuse could not be reached ({details}).\n"
            )
            code = INCOMPLETE
        else:
            out.write(f"Deleted {_count(deleted, 'Langfuse trace')}.\n")
    return code


async def _forget_traces(settings: OperatorSettings, user_id: str) -> int | None:
    """The person's Langfuse traces deleted (None when Langfuse could not be asked)."""
    tracing.configure_tracing(settings)
    try:
        return await tracing.forget_person_traces(user_id)
    finally:
        tracing.shutdown()


def _count(n: int, thing: str) -> str:
    return f"{n} {thing}" if n == 1 else f"{n} {thing}s"


def migrate(settings: OperatorSettings, *, out: TextIO = sys.stdout) -> int:
    if missing := _no_directory(settings, "nothing was moved"):
        return report_problem(MIGRATE_WHO, missing, BAD_INPUT)
    details = log_to_file(settings, MIGRATE_LOG_FILE)
    out.write(f"Memory store: {settings.store_location()}\n")
    return asyncio.run(_migrate(settings, out, details))


async def _migrate(settings: OperatorSettings, out: TextIO, details: str) -> int:
    storage = build_storage(settings)
    try:
        # As `orion memory`: a bucket that cannot be used at all is said as such, not as a
        # store that failed midway (no rerun mends missing credentials).
        await storage.store.connect()
        report = await upgrade(whole_store(storage, settings))
    except StoreError as exc:
        log.error("memory.upgrade.failed", exc_info=exc)
        unusable = isinstance(exc, BucketNotFound | NoCredentials | AccessDenied)
        if unusable and (said := store_problem(settings, exc)):
            return report_problem(MIGRATE_WHO, *said)
        problem = (
            f"the store {settings.store_location()} failed ({type(exc).__name__}; {details}); "
            "what moved stays moved: run the command again"
        )
        return report_problem(MIGRATE_WHO, problem, STORE_FAILED)
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
