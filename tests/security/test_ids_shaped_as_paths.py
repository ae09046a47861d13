"""Slack as the attacker, with ids shaped as paths: a signed DM whose `user`, or a mention whose
`channel`, reads `../../deployment/layout.json` (or a look-alike). Keys are built only from
ids of Slack's shapes (app/memory/homes.py): nothing is written outside the owners' homes,
the layout mark stays as written, and no such event reaches Claude.

Tried in round 9: held; kept so it keeps holding.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from app.learning.upgrade import LAYOUT_MARKER
from tests.e2e import both_experiences
from tests.e2e.channels import set_up_channels
from tests.e2e.memory_bucket import Bucket
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

experience = both_experiences.experience
slack = both_experiences.slack

SHAPES = [
    "../../deployment/layout.json",
    "U0X/../../deployment",
    "U0X%2F..%2F..%2Fdeployment",
    "U0X\uff0f\uff0e\uff0e\uff0fdeployment",
    "u0lowercase",
]


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], experience: str) -> OrionServer:
    return orion_on_bucket(slack_experience=experience)


def test_ids_shaped_as_paths_write_nothing_outside_a_home_and_reach_no_claude(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, bucket: Bucket
) -> None:
    set_up_channels(slack)
    mark = bucket.read(LAYOUT_MARKER)
    assert mark is not None  # every start writes it
    for shape in SHAPES:
        claude.reply("Nothing to see.")
        dm = events.top_level_dm(shape, "D0PATHS1", "hello")
        mention = events.app_mention("U0ANA1", shape.replace("U0X", "C0X"), "<@UBOT> hi")
        for payload in (dm, mention):
            assert orion.post_event(payload).status_code == 200
    orion.wait_idle()

    assert bucket.read(LAYOUT_MARKER) == mark
    kept = [name for name in bucket.names() if name != LAYOUT_MARKER]
    assert not [k for k in kept if k.startswith(("deployment/", "installations/"))], kept
    assert not [k for k in kept if ".." in k or "\uff0e" in k or "%" in k], kept
    assert claude.requests == [], "no such event reaches Claude"
