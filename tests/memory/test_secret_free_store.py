"""No secret is kept: whatever writes to the store, a secret lands as `[redacted]`.

On both backends, reading the raw objects (the directory's files, the emulator's bucket)
rather than going back through Orion's store.
"""

from __future__ import annotations

import asyncio

import pytest

from app.memory.scopes import MemoryScope
from app.memory.secret_free_store import OFF_LOOP_CHARS, SecretFreeStore
from app.memory.tool.scoped_tool import ScopedMemoryTool
from app.storage.store import CREATE_ONLY, ObjectStore, PreconditionFailed, StoreLayer
from tests.backends import USER, Backend
from tests.memory.tool.helpers import run

SLACK_TOKEN = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
NOTES = f"/memories/users/{USER}/notes.md"
NOTES_KEY = f"users/{USER}/notes.md"


def raw_bytes(backend: Backend, key: str) -> bytes | None:
    """The object's bytes as stored (`raw_read` decodes text with universal newlines)."""
    if backend.emulator is not None:
        assert backend.bucket is not None
        return backend.emulator.read(backend.bucket, key)
    assert backend.directory is not None
    path = backend.directory / key
    return path.read_bytes() if path.is_file() else None


async def test_a_memory_tool_create_with_a_slack_token_stores_redacted(
    backend: Backend, scope: MemoryScope
) -> None:
    tool = ScopedMemoryTool(backend.kept(), scope)
    text = f"Deploy bot token: {SLACK_TOKEN}\nTeam: payments\n"

    result = await run(tool, command="create", path=NOTES, file_text=text)

    assert result == f"File created successfully at: {NOTES}"
    assert backend.raw_read(NOTES_KEY) == "Deploy bot token: [redacted]\nTeam: payments\n"
    viewed = await run(tool, command="view", path=NOTES)
    assert SLACK_TOKEN not in viewed and "[redacted]" in viewed


async def test_edits_that_add_a_secret_store_it_redacted(
    backend: Backend, scope: MemoryScope
) -> None:
    tool = ScopedMemoryTool(backend.kept(), scope)
    await run(tool, command="create", path=NOTES, file_text="db: staging\n")
    await run(
        tool,
        command="str_replace",
        path=NOTES,
        old_str="db: staging",
        new_str="db: staging, password: hunter2",
    )
    await run(tool, command="insert", path=NOTES, insert_line=1, insert_text=f"bot {SLACK_TOKEN}")

    assert backend.raw_read(NOTES_KEY) == "db: staging, password: [redacted]\nbot [redacted]\n"


async def test_text_without_secrets_is_stored_byte_for_byte(
    backend: Backend, scope: MemoryScope
) -> None:
    tool = ScopedMemoryTool(backend.kept(), scope)
    text = (
        "We discussed the password reset flow.\r\nCafé ☕, naïve 🙂\n"
        "A bot token starts with xoxb-.\n\n\ttabs and trailing spaces   \n"
    )
    await run(tool, command="create", path=NOTES, file_text=text)
    assert raw_bytes(backend, NOTES_KEY) == text.encode()


async def test_conditional_writes_keep_their_meaning(backend: Backend) -> None:
    store = SecretFreeStore(backend.store)
    generation = await store.write("users/U0123ABCD/a.md", f"t {SLACK_TOKEN}", if_generation=0)
    with pytest.raises(PreconditionFailed):
        await store.write("users/U0123ABCD/a.md", "again", if_generation=CREATE_ONLY)
    await store.write("users/U0123ABCD/a.md", "password=x", if_generation=generation)
    stored = await store.read("users/U0123ABCD/a.md")
    assert stored is not None and stored.content == "password=[redacted]"
    assert [obj.key for obj in await store.list("users/")] == ["users/U0123ABCD/a.md"]
    assert await store.delete("users/U0123ABCD/a.md")


class _Watched(StoreLayer):
    """The store beneath, noting how often the event loop served something else before
    each write reached it."""

    def __init__(self, inner: ObjectStore, served: list[int]) -> None:
        super().__init__(inner)
        self.served = served
        self.seen: list[int] = []

    async def write(self, key: str, content: str, *, if_generation: int | None = None) -> int:
        self.seen.append(self.served[0])
        return await self.inner.write(key, content, if_generation=if_generation)


async def test_a_large_write_is_redacted_while_the_event_loop_serves_others(
    backend: Backend,
) -> None:
    """A search index of several MB takes a good part of a second to scrub: it is scrubbed
    on a worker thread, so other conversations go on meanwhile; a short write is scrubbed
    at once, on the loop."""
    served = [0]

    async def another_conversation() -> None:
        while True:
            await asyncio.sleep(0)
            served[0] += 1

    watched = _Watched(backend.store, served)
    store = SecretFreeStore(watched)
    index = "We compared the Q2 and Q3 spend by region. " * 50_000 + f"bot {SLACK_TOKEN}"
    assert len(index) > OFF_LOOP_CHARS
    other = asyncio.create_task(another_conversation())
    try:
        await store.write("people/U0123ABCD/search.json", f"short {SLACK_TOKEN}")
        await store.write("people/U0123ABCD/search.json", index)
    finally:
        other.cancel()

    short_write, large_write = watched.seen
    assert short_write == 0 and large_write > 0
    stored = backend.raw_read("people/U0123ABCD/search.json") or ""
    assert SLACK_TOKEN not in stored and stored.endswith("bot [redacted]")
