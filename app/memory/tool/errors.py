"""The error the memory tool shows the model, and what of it may be logged."""

from __future__ import annotations

from anthropic.tools import ToolError


class MemoryToolError(ToolError):
    """A model-visible error result (sent with `is_error: true`). `log_message` is the message
    without what the model quoted from a file (`old_str`), so logs and spans never carry memory
    contents; `internal` marks a failure on Orion's side (the store is down)."""

    def __init__(
        self, message: str, *, log_message: str | None = None, internal: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.log_message = log_message if log_message is not None else message
        self.internal = internal


def conflict(path: str) -> MemoryToolError:
    """Someone else changed the file between our read and our conditional write."""
    return MemoryToolError(
        f"The file {path} was changed by someone else at the same time, so this change was "
        "not made. View it again and retry."
    )
