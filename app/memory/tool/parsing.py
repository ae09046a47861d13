"""The model's input, checked: a typed memory command, or an error result saying why not."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

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

from app.memory.tool.errors import MemoryToolError

COMMANDS: Mapping[str, type[BaseModel]] = {
    "view": BetaMemoryTool20250818ViewCommand,
    "create": BetaMemoryTool20250818CreateCommand,
    "str_replace": BetaMemoryTool20250818StrReplaceCommand,
    "insert": BetaMemoryTool20250818InsertCommand,
    "delete": BetaMemoryTool20250818DeleteCommand,
    "rename": BetaMemoryTool20250818RenameCommand,
}


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
