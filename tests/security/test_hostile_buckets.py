"""`orion migrate` (app/learning/upgrade.py) on a bucket holding objects nobody should have
written, as an attacker (or a damaged bucket) would leave them.

Found by the attacker (round 10): an old-layout erasure mark (`erasures/…`, written only
when someone asked to be forgotten, or Orion was removed from a channel) that cannot be
read was taken for no mark at all, so a member who had forgotten everything got their
words back in the channel threads they had spoken in (the old Orion's Forget everything
did not reach them: issue 43). The mark's own time, when the erasure wrote it, now
stands for the time it no longer says. And one old object larger than Orion reads (16 MiB)
stopped every run of the move at it, `orion migrate` saying "run the command again"
forever: it is now left where it is and counted, and the rest moves.

And `orion memory export` listed a person's conversations from their profile only, so a
profile that cannot be read exported "None." under Conversations while their home still
held them (and Forget everything, which lists the home, deletes them): an export now lists
the home's records too.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

from structlog.testing import capture_logs

from app.learning.memory_document import render_memory
from app.learning.memory_inventory import take_inventory
from app.learning.profile import Profile
from app.learning.upgrade import upgrade
from app.memory.homes import person
from app.storage.gcs import GcsObjectStore
from app.storage.gcs_connection import MAX_DOWNLOAD_BYTES
from app.storage.local_directory import LocalDirectoryStore
from tests.e2e.memory_bucket import Bucket
from tests.fakes.gcs import GcsEmulator
from tests.log_events import MEMORY_INVENTORY_TOO_LARGE
from tests.security.test_upgrade_keeps_erasures import DATA, SAM, _no_word_of_sam_in_the_channel

# Where the old layout kept Sam's erasure mark (sha256 of "orion-erasure:U0LEGACY1").
SAMS_MARK = "erasures/72f54ce50043c121704bd9b072f20dc4"
# After everything the old Orion wrote in the checked-in store.
FORGOTTEN_AT = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)


async def test_an_unreadable_erasure_mark_keeps_the_members_words_out_of_the_channel(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    shutil.copytree(DATA / "store", root)
    # Sam forgot everything on the old Orion after speaking in the channel; the mark it
    # wrote is damaged: nested past what Python's parser takes.
    mark = root / SAMS_MARK
    mark.write_text('{"erased_at": ' + "[" * 100_000 + "]" * 100_000 + "}")
    os.utime(mark, (FORGOTTEN_AT.timestamp(), FORGOTTEN_AT.timestamp()))
    store = LocalDirectoryStore(root)

    await upgrade(store)

    await _no_word_of_sam_in_the_channel(store)
    stored = await store.read(person(SAM["user"]).profile_key)
    assert stored is not None
    assert Profile.parse(stored.content).erased_at == FORGOTTEN_AT
    assert not (root / SAMS_MARK).exists(), "its time is home: the old mark goes"


async def test_an_export_holds_the_conversations_in_the_home_when_the_profile_is_unreadable(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    shutil.copytree(DATA / "store", root)
    store = LocalDirectoryStore(root)
    await upgrade(store)
    profile = root / person(SAM["user"]).profile_key
    profile.write_text("[" * 100_000 + "]" * 100_000)  # damaged: nested past the parser

    inventory = await take_inventory(store, SAM["user"], full=True, conversations=None)
    document = render_memory(inventory, full=True)  # what `orion memory export` writes

    assert (root / person(SAM["user"]).conversations_prefix).is_dir(), "still in the home"
    for conversation in SAM["conversations"]:
        assert conversation["title"] in document


def _legacy_bucket(gcs_emulator: GcsEmulator, gcs_bucket: str) -> Bucket:
    """The checked-in old layout, written into the emulator's bucket."""
    bucket = Bucket(gcs_emulator, gcs_bucket)
    for path in sorted((DATA / "store").rglob("*")):
        if path.is_file():
            bucket.write(path.relative_to(DATA / "store").as_posix(), path.read_text())
    return bucket


async def test_objects_too_large_to_read_are_left_and_the_rest_moves(
    gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    bucket = _legacy_bucket(gcs_emulator, gcs_bucket)
    # Past what Orion reads of any object (it never writes one this large): a note in
    # Sam's old memory and a conversation record.
    huge = "x" * (MAX_DOWNLOAD_BYTES + 1)
    big_note, big_record = "users/U0LEGACY1/notes/huge.md", "conversations/1795902399-000001.json"
    bucket.write(big_note, huge)
    bucket.write(big_record, huge)
    store = GcsObjectStore(gcs_bucket)
    try:
        report = await upgrade(store)
    finally:
        await store.close()

    assert report.unreadable == 2
    names = set(bucket.names())
    assert {big_note, big_record} <= names, "left where they are, for the operator"
    home = person(SAM["user"])
    assert f"{home.memory_prefix}notes/travel.md" in names
    for conversation in SAM["conversations"]:
        assert home.conversation_key(conversation["thread_ts"]) in names


async def test_an_erasure_mark_too_large_to_read_still_keeps_the_members_words_out(
    gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    bucket = _legacy_bucket(gcs_emulator, gcs_bucket)
    # Sam's mark of a Forget everything (after all he said), past what Orion reads.
    bucket.write(SAMS_MARK, "x" * (MAX_DOWNLOAD_BYTES + 1))
    store = GcsObjectStore(gcs_bucket)
    try:
        report = await upgrade(store)
        await _no_word_of_sam_in_the_channel(store)
    finally:
        await store.close()

    assert report.unreadable == 1
    assert SAMS_MARK in bucket.names(), "left where it is, counted"
    profile = Profile.parse(bucket.read(person(SAM["user"]).profile_key))
    assert profile.erased_at is not None and profile.erased_at > FORGOTTEN_AT


async def test_a_note_too_large_to_read_is_listed_and_the_rest_still_shows(
    gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    """A note past what Orion reads (only planted: Orion never writes one) made every Home
    tab say "unavailable" and `orion memory show` / `export` say "run the command again"."""
    bucket = Bucket(gcs_emulator, gcs_bucket)
    home = person(SAM["user"])
    bucket.write(f"{home.memory_prefix}notes/travel.md", "Sam flies to Lisbon in May.")
    bucket.write(f"{home.memory_prefix}notes/huge.md", "x" * (MAX_DOWNLOAD_BYTES + 1))
    store = GcsObjectStore(gcs_bucket)
    try:
        with capture_logs() as logs:
            inventory = await take_inventory(store, SAM["user"], full=True, conversations=None)
    finally:
        await store.close()

    [logged] = [line for line in logs if line["event"] == MEMORY_INVENTORY_TOO_LARGE]
    assert logged["key"].endswith("notes/huge.md") and logged["exc_info"] is not None
    document = render_memory(inventory, full=True)  # what `orion memory export` writes
    assert "Sam flies to Lisbon in May." in document
    [huge] = [note for note in inventory.notes if note.path.endswith("huge.md")]
    assert huge.size == MAX_DOWNLOAD_BYTES + 1 and huge.content is None
    assert "huge.md" in document and "x" * 100 not in document
