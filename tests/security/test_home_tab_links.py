"""The Home tab links only to Slack threads, whatever the stored channel values say.

Where a preference was learned is read back from a file a person can edit through
Claude's memory tool; which DM a conversation is in comes from Orion's own records (the
person's profile), checked all the same (a record from an older version, a bug, a hand
edit). Stored here: channels such as `javascript:…`, `https://evil…` and
`D123|<!channel>`, and a thread that is not a Slack timestamp. The person opens their Home
tab through the real Orion HTTP app; the view the fake Slack received links only to Slack
permalinks Orion built.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from app.learning.timestamps import format_time
from app.memory.homes import person, preferences_key
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.layout import conversation
from tests.orion_server import OrionServer, make_settings

USER, DM = "U0LINKS", "D0LINKS"
WORKSPACE = "https://orion-test.slack.com"  # the fake Slack's auth.test
GOOD_THREAD = "1777000000.000100"
WHEN = format_time(datetime.now(UTC).replace(microsecond=0) - timedelta(days=1))

HOSTILE_CHANNELS = (
    "javascript:alert(document.cookie)",
    "https://evil.example/phish",
    "D123|<!channel>",
    "D0LINKS>https://evil.example",
    "d0lowercase",
    "D0LINKS/../../evil",
    "U0NOTACHANNEL",
    "",
)
# How a hostile value could show up in the view, in any of Slack's link forms.
FORBIDDEN = ("javascript", "evil", "<!channel>", "d0lowercase", "U0NOTACHANNEL", "../")
# `<url|label>`: a link in mrkdwn (`<!date^…|…>` is a date, not a link).
LINK = re.compile(r"<([^!|>][^|>]*)\|")
PERMALINK = re.compile(re.escape(WORKSPACE) + r"/archives/[CDG][A-Z0-9]+/p[0-9]+")


def hostile_memory() -> dict[str, str]:
    learned = {
        f"pref_{n}": {"at": WHEN, "channel": channel, "thread": GOOD_THREAD}
        for n, channel in enumerate(HOSTILE_CHANNELS)
    }
    learned["pref_bad_thread"] = {"at": WHEN, "channel": DM, "thread": "1.2|<!channel>"}
    learned["pref_good"] = {"at": WHEN, "channel": DM, "thread": GOOD_THREAD}
    preferences = {key: f"value of {key}" for key in learned} | {"_learned": learned}
    index = [
        {
            "thread": f"1777000{n:03d}.000200",
            "title": f"Conversation {n}",
            "updated": WHEN,
            "channel": channel,
        }
        for n, channel in enumerate(HOSTILE_CHANNELS)
    ]
    index.append({"thread": GOOD_THREAD, "title": "The good one", "updated": WHEN, "channel": DM})
    # Each conversation as Orion keeps it (in the DM); only its profile entry names another.
    conversations = {
        person(USER).conversation_key(entry["thread"]): conversation(USER, entry["thread"])
        for entry in index
    }
    return {
        preferences_key(USER): json.dumps(preferences),
        person(USER).profile_key: json.dumps({"version": 2, "conversations": index}),
        **conversations,
    }


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def orion(slack: FakeSlack, tmp_path: Path) -> Iterator[OrionServer]:
    memory_dir = tmp_path / "memories"
    for key, content in hostile_memory().items():
        (memory_dir / key).parent.mkdir(parents=True, exist_ok=True)
        (memory_dir / key).write_text(content)
    with (
        FakeClaude() as claude,
        OrionServer(make_settings(slack, claude, memory_dir=memory_dir)) as server,
    ):
        yield server


def open_home(orion: OrionServer, slack: FakeSlack) -> dict[str, Any]:
    assert orion.post_event(events.app_home_opened(USER, DM, tab="home")).status_code == 200
    return slack.wait_for(lambda: slack.home_view(USER), timeout=30, what="the Home tab view")


def test_stored_channel_values_never_become_links_in_the_home_tab(
    orion: OrionServer, slack: FakeSlack
) -> None:
    view = open_home(orion, slack)
    published = json.dumps(view)

    for forbidden in FORBIDDEN:
        assert forbidden not in published
    links = LINK.findall(published)
    assert links, "the valid entries are linked"
    assert all(PERMALINK.fullmatch(link) for link in links), links
    good = f"{WORKSPACE}/archives/{DM}/p{GOOD_THREAD.replace('.', '')}"
    # One link for the preference learned in a real thread, one for the real conversation.
    assert links == [good, good]
    # The hostile entries are still listed, just without a link.
    for n in range(len(HOSTILE_CHANNELS)):
        assert f"Conversation {n}" in published
    assert "value of pref_0" in published and "value of pref_bad_thread" in published
