"""Claude's memory tool, confined to one turn of one person in one thread (docs/interface.md, "The
memory tool"): every other path an error that reveals nothing, results as the SDK's reference's."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, cast

from anthropic.lib.tools import BetaFunctionToolResultType
from anthropic.tools import BetaAsyncAbstractMemoryTool
from anthropic.types.beta import (
    BetaMemoryTool20250818Command,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)
from pydantic import BaseModel, ValidationError

from app.memory.scopes import ScopeRules
from app.memory.token_estimate import estimate_tokens
from app.memory.tool import editing, moving
from app.memory.tool.access import (
    MAX_BYTES_PER_DIRECTORY,
    MAX_FILE_BYTES,
    MAX_FILES_PER_DIRECTORY,
    ScopedAccess,
    key_of,
)
from app.memory.tool.errors import MemoryToolError
from app.memory.tool.rendering import render_directory, render_file
from app.observability import tracing
from app.observability.logging import get_logger
from app.observability.redaction import redact_secret_shapes
from app.storage.store import ObjectStore, StoreError, StoreUnavailable

log = get_logger(__name__)

# Memory commands one turn may make: room for remembering, tidying by directories and
# reading a dozen files; it stops a turn that loops on the tool (one made 606 operations).
MAX_CALLS_PER_TURN = 30
# Memory one turn may read back: half a context window. Thirty views of a 100 KB file
# came to 1.5 million tokens, a next request Claude's API refuses (the turn failed).
MAX_READ_TOKENS_PER_TURN = 100_000

COMMANDS: Mapping[str, type[BaseModel]] = {
    "view": BetaMemoryTool20250818ViewCommand,
    "create": BetaMemoryTool20250818CreateCommand,
    "str_replace": BetaMemoryTool20250818StrReplaceCommand,
    "insert": BetaMemoryTool20250818InsertCommand,
    "delete": BetaMemoryTool20250818DeleteCommand,
    "rename": BetaMemoryTool20250818RenameCommand,
}


class ScopedMemoryTool(BetaAsyncAbstractMemoryTool):
    """The six memory commands over an `ObjectStore`, limited to a scope: a person's
    conversation (`MemoryScope`) or a channel's (`ChannelMemoryScope`)."""

    def __init__(
        self,
        store: ObjectStore,
        scope: ScopeRules,
        *,
        max_files_per_directory: int = MAX_FILES_PER_DIRECTORY,
        max_bytes_per_directory: int = MAX_BYTES_PER_DIRECTORY,
        max_calls: int = MAX_CALLS_PER_TURN,
    ) -> None:
        super().__init__()
        self.access = ScopedAccess(
            store, scope, MAX_FILE_BYTES, max_files_per_directory, max_bytes_per_directory
        )
        self.max_calls = max_calls  # this tool serves one turn: its calls are the turn's
        self.calls = 0
        self.read_tokens = 0

    async def call(self, input: object) -> BetaFunctionToolResultType:
        """Validate the model's input (a wrong shape is an error result, like any other),
        then run the command inside its span and log line."""
        with traced_command(command_name(input), traced_fields(input)):
            self.calls += 1
            if self.calls > self.max_calls:
                raise MemoryToolError(
                    f"This memory command did not run: one turn may make at most "
                    f"{self.max_calls} memory commands, and this turn has made them all. "
                    "Answer with what you have; the person can ask in a new message to go on.",
                    log_message=f"over the turn's limit of {self.max_calls} memory commands",
                )
            command = parse_command(input)
            try:
                return await self.execute(command)
            except StoreUnavailable as exc:
                raise MemoryToolError(
                    "Memory storage is temporarily unavailable, so this memory command did "
                    "not run. Continue without it, or try again later.",
                    log_message=f"store unavailable: {exc}",
                    internal=True,
                ) from exc
            except StoreError as exc:
                raise MemoryToolError(
                    f"The memory command failed: {exc}", log_message=str(exc), internal=True
                ) from exc

    # The SDK's `execute` dispatches to these, one per command.

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        """A file with line numbers, or a directory listing, within the turn's reads."""
        shown = await self._view(command)
        tokens = estimate_tokens(shown)
        # The first view is always shown: any file the tool let the model keep is readable.
        if self.read_tokens and self.read_tokens + tokens > MAX_READ_TOKENS_PER_TURN:
            raise MemoryToolError(
                f"{command.path} was not shown: this turn has read all the memory one turn "
                "may read. Answer with what you have, or view a part with `view_range`."
            )
        self.read_tokens += tokens
        return shown

    async def _view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path, key = command.path, key_of(command.path)
        scope, store = self.access.scope, self.access.store
        if scope.can_read(key):
            if not scope.is_root(key):
                stored = await store.read(key)
                if stored is not None:
                    # Numbering lines is a loop in Python: tens of milliseconds for a file of
                    # 100,000 short lines, and the organisation's context has no size limit.
                    return await asyncio.to_thread(
                        render_file, path, stored.content, command.view_range
                    )
            objects = await store.list(f"{key}/")
        elif key == "" or scope.roots_under(key):
            # Shared directories above this conversation's roots: show only those roots.
            listings = await asyncio.gather(*(store.list(root) for root in scope.roots_under(key)))
            objects = [obj for listing in listings for obj in listing]
        else:
            self.access.deny(path, writing=False)
        if not objects and key != "":
            raise MemoryToolError(f"The path {path} does not exist. Please provide a valid path.")
        return render_directory(path, key, objects)

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await editing.create(self.access, command)

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await editing.str_replace(self.access, command)

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await editing.insert(self.access, command)

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await moving.delete(self.access, command)

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await moving.rename(self.access, command)


def command_name(command_input: object) -> str:
    """The command's name for logs and spans ("invalid" when it is not one of ours)."""
    name = command_input.get("command") if isinstance(command_input, Mapping) else None
    return name if isinstance(name, str) and name in COMMANDS else "invalid"


def parse_command(command_input: object) -> BetaMemoryTool20250818Command:
    """The typed command, or an error result that names what is wrong with the input."""
    if not isinstance(command_input, Mapping):
        raise MemoryToolError("Invalid memory tool input: expected a JSON object with a `command`")
    name = command_input.get("command")
    model = COMMANDS.get(name) if isinstance(name, str) else None
    if model is None:
        expected = ", ".join(COMMANDS)
        raise MemoryToolError(
            f"Invalid memory tool input: unknown command {name!r}; expected one of {expected}"
        )
    try:
        # Strict: "3" is not a line number and 3 is not a path.
        parsed = model.model_validate(dict(command_input), strict=True)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, error['loc'])) or 'input'}: {error['msg']}"
            for error in exc.errors(include_input=False, include_url=False)
        )
        raise MemoryToolError(f"Invalid input for memory command {name!r}: {problems}") from None
    return cast(BetaMemoryTool20250818Command, parsed)


# --- one span and one log line per command: what was touched, whether it worked, how long
# it took — never what the files contain, nor a secret a path holds.

# Only these input fields are recorded; file_text, old_str, new_str and insert_text
# are memory contents.
TRACED_FIELDS = ("path", "old_path", "new_path", "view_range", "insert_line")


def traced_fields(command_input: object) -> dict[str, Any]:
    """The recordable part of a raw tool input, whatever its shape."""
    if not isinstance(command_input, Mapping):
        return {}
    fields: dict[str, Any] = {}
    for name in TRACED_FIELDS:
        if name in command_input:
            value = command_input[name]
            if isinstance(value, str):
                # A path the model made up may hold a secret (it is then refused).
                fields[name] = redact_secret_shapes(value)
            elif isinstance(value, int | list) and not isinstance(value, bool):
                fields[name] = value
            else:
                fields[name] = redact_secret_shapes(repr(value)[:100])
    return fields


@contextmanager
def traced_command(command: str, fields: Mapping[str, Any]) -> Iterator[None]:
    """Record the command run inside the block as span and log line `tool.memory.<command>`:
    a model-visible error is a warning (an error when internal: the store failed), a
    cancellation a warning, any other exception a bug, an error."""
    name = f"tool.memory.{command}"
    started = time.perf_counter()
    with tracing.observe(name, as_type="tool", input={"command": command, **fields}) as span:
        try:
            yield
        except MemoryToolError as exc:
            level = "ERROR" if exc.internal else "WARNING"
            _record(span, name, fields, started, error=exc.log_message, level=level)
            raise
        except asyncio.CancelledError:
            # A caller's time budget ran out: still one line per command, then let it go.
            _record(span, name, fields, started, error="cancelled", level="WARNING")
            raise
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            _record(span, name, fields, started, error=error, level="ERROR")
            raise
        else:
            _record(span, name, fields, started, error=None, level="DEFAULT")


def _record(
    span: Any,
    name: str,
    fields: Mapping[str, Any],
    started: float,
    *,
    error: str | None,
    level: str,
) -> None:
    duration_ms = round((time.perf_counter() - started) * 1000, 2)
    outcome = "ok" if error is None else "error"
    if error is None:
        span.update(output={"ok": True}, metadata={"outcome": outcome, "duration_ms": duration_ms})
        log.info(name, **fields, ok=True, duration_ms=duration_ms)
        return
    error = redact_secret_shapes(error)  # it may quote a path, which may hold a secret
    span.update(
        output={"ok": False, "error": error},
        metadata={"outcome": outcome, "duration_ms": duration_ms},
        level=level,
        status_message=error,
    )
    emit = log.error if level == "ERROR" else log.warning
    emit(name, **fields, ok=False, duration_ms=duration_ms, error=error)
