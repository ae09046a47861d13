"""Local directory backend specifics: permissions, atomic writes, generations, confinement."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from app.storage.local_directory import LocalDirectoryStore
from app.storage.store import CREATE_ONLY, PreconditionFailed


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_files_and_directories_are_private_whatever_the_umask(tmp_path: Path) -> None:
    store = LocalDirectoryStore(tmp_path / "memories")
    previous = os.umask(0)
    try:
        await store.write("users/U1AB/notes.md", "private")
    finally:
        os.umask(previous)

    assert _mode(tmp_path / "memories") == 0o700
    assert _mode(tmp_path / "memories" / "users") == 0o700
    assert _mode(tmp_path / "memories" / "users" / "U1AB") == 0o700
    assert _mode(tmp_path / "memories" / "users" / "U1AB" / "notes.md") == 0o600


async def test_generations_increase_even_for_writes_in_the_same_instant(tmp_path: Path) -> None:
    store = LocalDirectoryStore(tmp_path)
    generations = [await store.write("k.md", str(n)) for n in range(20)]

    assert generations == sorted(generations) and len(set(generations)) == 20
    stored = await store.read("k.md")
    assert stored is not None and stored.generation == generations[-1]


async def test_a_hand_edit_counts_as_a_new_generation(tmp_path: Path) -> None:
    store = LocalDirectoryStore(tmp_path)
    generation = await store.write("k.md", "by Orion")
    os.utime(tmp_path / "k.md", ns=(generation + 1000, generation + 1000))

    with pytest.raises(PreconditionFailed):
        await store.write("k.md", "stale", if_generation=generation)


async def test_concurrent_create_only_writes_have_exactly_one_winner(tmp_path: Path) -> None:
    store = LocalDirectoryStore(tmp_path)

    async def create(n: int) -> bool:
        try:
            await store.write("k.md", str(n), if_generation=0)
        except PreconditionFailed:
            return False
        return True

    results = await asyncio.gather(*(create(n) for n in range(30)))

    assert results.count(True) == 1


async def test_no_temporary_files_are_left_or_listed(tmp_path: Path) -> None:
    store = LocalDirectoryStore(tmp_path)
    await asyncio.gather(*(store.write("users/U1AB/k.md", str(n)) for n in range(20)))
    (tmp_path / "users" / "U1AB" / ".tmp-leftover").write_text("crash debris")

    assert [info.key for info in await store.list("")] == ["users/U1AB/k.md"]
    assert sorted(p.name for p in (tmp_path / "users" / "U1AB").iterdir()) == [
        ".tmp-leftover",
        "k.md",
    ]


async def test_deleting_the_last_file_removes_its_empty_directories(tmp_path: Path) -> None:
    store = LocalDirectoryStore(tmp_path / "memories")
    await store.write("users/U1AB/a/b/c.md", "c")
    await store.write("users/U1AB/keep.md", "k")

    await store.delete("users/U1AB/a/b/c.md")

    assert not (tmp_path / "memories" / "users" / "U1AB" / "a").exists()
    assert (tmp_path / "memories" / "users" / "U1AB" / "keep.md").exists()


@pytest.mark.parametrize(
    "key", ["", "/etc/passwd", "../x", "a/../../x", "a//b", "a\\b", "a/.tmp-x"]
)
async def test_keys_cannot_leave_the_directory(tmp_path: Path, key: str) -> None:
    store = LocalDirectoryStore(tmp_path / "memories")
    with pytest.raises(ValueError):
        await store.write(key, "x")
    with pytest.raises(ValueError):
        await store.read(key)


async def test_symlinks_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not a memory")
    root = tmp_path / "memories"
    root.mkdir()
    (root / "link.md").symlink_to(outside)

    store = LocalDirectoryStore(root)

    assert await store.read("link.md") is None
    assert await store.list("") == []


async def test_a_fresh_relative_memory_dir_is_created_on_first_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the default MEMORY_DIR is relative: .orion/memories
    store = LocalDirectoryStore(Path(".orion/memories"))
    await store.write("events/EvFirst", "{}", if_generation=CREATE_ONLY)
    assert (tmp_path / ".orion/memories/events/EvFirst").read_text() == "{}"
