"""A person's home holding an object larger than Orion reads (16 MiB), as an attacker with
write access to the bucket (or a damaged bucket) would leave it: Orion never writes one.

Found by the attacker (round 11): round 10 made a note of that size show as "too large to
show", but every other object of the home that the Home tab, an export or a Forget reads
stopped them. A profile or settings file that large made Forget everything fail on every
click and every `orion memory forget` (nothing was deleted: the erasure never stuck) and
the Home tab "unavailable", so the button was not even there; such a profile made Forget
on one conversation fail too; preferences that large, or one conversation record, made
every export (which since round 10 reads every record in the home) fail with "run the
command again". Now the erasure writes its mark over such a profile and deletes the
rest, Forget on a conversation leaves the profile as it is (as one that cannot be
parsed), and the Home tab and the export show the rest of the home, with what could not
be read listed as too large to show.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from structlog.testing import capture_logs

from app.learning.memory_document import render_memory
from app.learning.memory_inventory import TOO_LARGE, take_inventory
from app.memory.homes import person, preferences_key
from app.slack.home import controls
from app.slack.home.memory_view import ACTION_FORGET_CONVERSATION, ACTION_FORGET_EVERYTHING
from app.storage.gcs import GcsObjectStore
from app.storage.gcs_connection import MAX_DOWNLOAD_BYTES
from tests import layout, log_events
from tests.e2e.home import click, open_home, shown
from tests.e2e.memory_bucket import Bucket
from tests.e2e.test_memory_controls import (
    DM,
    NOTE,
    NOTE_NAME,
    THREAD,
    TITLE,
    USER,
    everything_in,
    left_of,
    mira,
    otto,
    seed,
)
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

HUGE = "x" * (MAX_DOWNLOAD_BYTES + 1)
HOME = person(USER)
# A conversation of hers her profile does not list (it is past the profile's cap).
UNLISTED = "1777000900.000300"


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], bucket: Bucket) -> OrionServer:
    seed(bucket, mira())
    seed(bucket, otto())
    return orion_on_bucket()


@pytest.mark.parametrize("key", [HOME.profile_key, HOME.settings_key], ids=["profile", "settings"])
def test_forget_everything_erases_a_home_whose_profile_or_settings_are_too_large_to_read(
    orion: OrionServer, slack: FakeSlack, bucket: Bucket, key: str
) -> None:
    others = {k: bucket.read(k) for k in otto()}
    bucket.write(key, HUGE)

    # Her Home tab still shows what it can, and its Forget everything button.
    view = open_home(orion, slack, USER, DM)
    assert NOTE_NAME in shown(view)
    after = click(orion, slack, USER, view, ACTION_FORGET_EVERYTHING)

    assert controls.FORGOT_EVERYTHING in shown(after)
    assert left_of(bucket, USER) == {}, "everything of hers goes, the large file too"
    mark = layout.profile_of(bucket.read(HOME.profile_key))
    assert mark.erased_at is not None, "the profile is the erasure's mark"
    assert {k: bucket.read(k) for k in otto()} == others, "Otto's memory is his"
    assert orion.logged(log_events.MEMORY_FORGET_FAILED) == []


def test_forget_on_a_conversation_reaches_it_when_the_profile_is_too_large_to_read(
    orion: OrionServer, slack: FakeSlack, bucket: Bucket
) -> None:
    view = open_home(orion, slack, USER, DM)  # open (listing the conversation) before
    bucket.write(HOME.profile_key, HUGE)

    click(orion, slack, USER, view, ACTION_FORGET_CONVERSATION, THREAD)
    orion.wait_idle()

    assert layout.conversation_key(USER, THREAD) not in everything_in(bucket)
    assert bucket.read(HOME.profile_key) == HUGE, "left as it is: no turn of hers writes"
    assert orion.logged(log_events.MEMORY_FORGET_FAILED) == []


EXPORTED: dict[str, tuple[str, str | None]] = {
    # What is too large: its key, and how the export names it.
    "profile": (HOME.profile_key, None),
    "settings": (HOME.settings_key, None),
    "preferences": (preferences_key(USER), "preferences.json"),
    "a listed conversation": (layout.conversation_key(USER, THREAD), TITLE),
    "an unlisted conversation": (layout.conversation_key(USER, UNLISTED), TOO_LARGE),
}


@pytest.mark.parametrize("large", EXPORTED.values(), ids=EXPORTED.keys())
async def test_an_export_shows_the_rest_of_a_home_beside_an_object_too_large_to_read(
    gcs_emulator: GcsEmulator, gcs_bucket: str, large: tuple[str, str | None]
) -> None:
    key, named = large
    bucket = Bucket(gcs_emulator, gcs_bucket)
    seed(bucket, mira())
    bucket.write(key, HUGE)
    store = GcsObjectStore(gcs_bucket)
    try:
        with capture_logs() as logs:
            inventory = await take_inventory(store, USER, full=True, conversations=None)
    finally:
        await store.close()

    document = render_memory(inventory, full=True)  # what `orion memory export` writes
    assert NOTE in document, "her note shows"
    if named is not None:
        assert named in document, "what could not be read is listed"
    assert "x" * 100 not in document
    [logged] = [line for line in logs if line["event"] == log_events.MEMORY_INVENTORY_TOO_LARGE]
    assert logged["key"] == key and logged["exc_info"] is not None
