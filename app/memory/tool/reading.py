"""`view`: a file with line numbers, or a directory listing."""

from __future__ import annotations

import asyncio

from anthropic.types.beta import BetaMemoryTool20250818ViewCommand

from app.memory.tool.access import ScopedAccess, key_of
from app.memory.tool.errors import MemoryToolError
from app.memory.tool.rendering import render_directory, render_file


async def view(access: ScopedAccess, command: BetaMemoryTool20250818ViewCommand) -> str:
    path = command.path
    key = key_of(path)
    scope, store = access.scope, access.store
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
        access.deny(path, writing=False)
    if not objects and key != "":
        raise MemoryToolError(f"The path {path} does not exist. Please provide a valid path.")
    return render_directory(path, key, objects)
