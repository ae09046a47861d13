"""A Home tab click carrying a forged value reaches nothing but the clicking person's own
memory, and of that only what the value names.

A button's value comes back from Slack as the view sent it — unless someone forges the
payload: played here with the value of each Forget button replaced by another person's
thread or note, traversal in every spelling, Unicode look-alikes and the longest values,
through the real Orion HTTP app and the GCS emulator. Otto's memory stays as it was,
Mira's too, and she sees that there was nothing by that name.

Found by the attacker (round 11): Download sent the export to the DM named in the clicked
view's private metadata whenever that metadata named the clicking person, so a view whose
metadata said "Mira, in Otto's DM" posted everything Orion keeps about Mira in Otto's
DM. The file now goes to the DM Slack says is hers (`conversations.open`).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from app.memory.homes import person
from app.slack.home import controls
from app.slack.home.memory_view import (
    ACTION_DOWNLOAD,
    ACTION_FORGET_CONVERSATION,
    ACTION_FORGET_NOTE,
    ACTION_FORGET_PREFERENCE,
)
from tests.e2e.home import click, next_view, open_home, shown
from tests.e2e.memory_bucket import Bucket
from tests.e2e.test_memory_controls import (
    DM,
    NOTE,
    NOTE_NAME,
    OTHER,
    OTHER_THREAD,
    THREAD,
    USER,
    everything_in,
    mira,
    otto,
    seed,
)
from tests.fakes import slack_events as events
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

OTTO_NOTE = "plans.md"
OTTO_NOTE_KEY = f"{person(OTHER).memory_prefix}{OTTO_NOTE}"

FORGED: list[tuple[str, str, str]] = [
    # (button, the value Slack would have sent, the forged value)
    (ACTION_FORGET_CONVERSATION, THREAD, OTHER_THREAD),
    (ACTION_FORGET_CONVERSATION, THREAD, f"../../{OTHER}/conversations/{OTHER_THREAD}"),
    (ACTION_FORGET_CONVERSATION, THREAD, "１７７７０００５００.０００２００"),  # full-width digits
    (ACTION_FORGET_CONVERSATION, THREAD, THREAD + "\n" + OTHER_THREAD),
    (ACTION_FORGET_CONVERSATION, THREAD, "9" * 40_000 + "." + "9" * 40_000),
    (ACTION_FORGET_NOTE, NOTE_NAME, f"../{OTHER}/memory/{OTTO_NOTE}"),
    (ACTION_FORGET_NOTE, NOTE_NAME, f"..%2F{OTHER}%2Fmemory%2F{OTTO_NOTE}"),
    (ACTION_FORGET_NOTE, NOTE_NAME, f"/memories/users/{OTHER}/{OTTO_NOTE}"),
    (ACTION_FORGET_NOTE, NOTE_NAME, f"．．/{OTHER}/{OTTO_NOTE}"),  # full-width dots
    (ACTION_FORGET_NOTE, NOTE_NAME, NOTE_NAME + "\x00"),
    (ACTION_FORGET_NOTE, NOTE_NAME, "a/" * 20_000 + OTTO_NOTE),
    (ACTION_FORGET_PREFERENCE, "language", "../" + OTHER),
    (ACTION_FORGET_PREFERENCE, "language", "\u202e" + "x" * 40_000),
]


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], bucket: Bucket) -> OrionServer:
    seed(bucket, mira())
    seed(bucket, otto())
    bucket.write(OTTO_NOTE_KEY, "# Otto's plans\nThe reorg, not yet announced.\n")
    return orion_on_bucket()


@pytest.mark.parametrize(
    ("action_id", "shown_value", "forged"),
    FORGED,
    ids=[f"{action.rsplit('_', 1)[-1]}-{i}" for i, (action, _, _) in enumerate(FORGED)],
)
def test_a_forged_forget_value_reaches_nothing(
    orion: OrionServer,
    slack: FakeSlack,
    bucket: Bucket,
    action_id: str,
    shown_value: str,
    forged: str,
) -> None:
    view = open_home(orion, slack, USER, DM)
    before = everything_in(bucket)
    payload = events.view_block_actions(USER, view, action_id, shown_value)
    payload["actions"][0]["value"] = forged
    published = len(slack.home_views(USER))
    assert orion.post_form(events.form_body(payload)).status_code == 200
    after = next_view(slack, USER, published)
    orion.wait_idle()

    assert controls.ALREADY_GONE in shown(after)
    assert everything_in(bucket) == before, "nothing of anyone's changed"
    assert orion.http.get("/healthz").status_code == 200


def test_a_download_goes_only_to_the_clicking_persons_own_dm(
    orion: OrionServer, slack: FakeSlack
) -> None:
    view = open_home(orion, slack, USER, DM)
    ottos_dm = slack.dm_channel(OTHER)
    view["private_metadata"] = json.dumps({"user": USER, "dm": ottos_dm})

    after = click(orion, slack, USER, view, ACTION_DOWNLOAD)

    assert controls.SENT in shown(after)
    assert slack.files(ottos_dm) == [] and slack.messages(ottos_dm) == []
    [file] = slack.files(DM)
    assert NOTE.strip() in file.text, "hers, in her own DM"
