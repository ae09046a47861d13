"""The Home tab's view within Slack's limits, whatever a person has accumulated: long lists
cut with "…and N more", long values clipped, stored text never read as Slack markup, and
links to threads that work in DMs. Published through the real Web API client to the fake
Slack, which refuses what Slack would refuse."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from app.learning.memory_inventory import Conversation, MemoryInventory, Note
from app.learning.preferences import Learned, StoredPreference
from app.slack.home.memory_view import (
    ACTION_MEMORY_NOTES,
    MAX_BLOCKS,
    MAX_CONVERSATIONS,
    MAX_NOTES,
    MAX_PREFERENCES,
    NOTHING_KEPT,
    SUMMARY_CHARS,
    TITLE_CHARS,
    VALUE_CHARS,
    ThreadLinks,
    home_view,
)
from tests.fakes.slack_api import FakeSlack

USER, DM = "U0VIEW", "D0VIEW"
WHEN = datetime(2026, 5, 4, 10, 12, tzinfo=UTC)
LINKS = ThreadLinks("https://orion-test.slack.com/", "T1")


@pytest.fixture(scope="module")
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


def huge_inventory(count: int = 250) -> MemoryInventory:
    """Far more of everything than a view can hold, each value far too long for a block."""
    long = "x" * 5_000
    return MemoryInventory(
        user_id=USER,
        preferences=[
            StoredPreference(f"rule_{n}", long, Learned(WHEN, DM, f"1714000000.{n:06d}"))
            for n in range(count)
        ],
        notes=[
            Note(f"users/{USER}/n{n}.md", f"/memories/users/{USER}/n{n}.md", 10, WHEN, long)
            for n in range(count)
        ],
        conversations=[
            Conversation(f"1714000000.{n:06d}", DM, long, WHEN - timedelta(days=n), long)
            for n in range(count)
        ],
    )


async def publish(slack: FakeSlack, view: dict[str, object]) -> None:
    client = AsyncWebClient(token="xoxb-test", base_url=slack.url)
    await client.views_publish(user_id=USER, view=view)


async def test_a_huge_memory_fits_slacks_limits_and_says_how_much_more_there_is(
    slack: FakeSlack,
) -> None:
    inventory = huge_inventory()
    view = home_view(USER, inventory, LINKS, conversations_total=400)

    await publish(slack, view)  # the fake refuses what Slack would

    assert len(view["blocks"]) <= MAX_BLOCKS
    contexts = [b["elements"][0]["text"] for b in view["blocks"] if b["type"] == "context"]
    assert f"…and {250 - MAX_PREFERENCES} more" in " ".join(contexts)
    assert f"…and {250 - MAX_NOTES} more" in " ".join(contexts)
    assert f"…and {400 - MAX_CONVERSATIONS} more" in " ".join(contexts)
    headers = [b["text"]["text"] for b in view["blocks"] if b["type"] == "header"]
    assert "Recent conversations (400)" in headers


async def test_a_huge_memory_shows_the_first_of_each_list_each_clipped_to_be_read(
    slack: FakeSlack,
) -> None:
    view = home_view(USER, huge_inventory(), LINKS, notice="Forgot rule 0.")
    await publish(slack, view)

    shown = slack.home_view(USER)  # what the person's Home tab shows now
    assert shown is not None and "Forgot rule 0." in str(shown["blocks"])
    sections = [b for b in shown["blocks"] if b["type"] == "section" and "block_id" in b]
    items = {b["block_id"]: b["text"]["text"] for b in sections}
    assert list(items) == [
        "memory_notes_switch",
        *(f"preference-{n}" for n in range(MAX_PREFERENCES)),
        *(f"note-{n}" for n in range(MAX_NOTES)),
        *(f"conversation-{n}" for n in range(MAX_CONVERSATIONS)),
    ]
    assert items["preference-0"].startswith(f"*Rule 0*: {'x' * (VALUE_CHARS - 1)}…\n")
    assert f"> {'x' * (SUMMARY_CHARS - 1)}…" in items["note-0"]
    assert items["conversation-0"].startswith(f"*{'x' * (TITLE_CHARS - 1)}…*\n")


def test_stored_text_is_shown_as_text_never_as_slack_markup() -> None:
    inventory = MemoryInventory(
        user_id=USER,
        preferences=[StoredPreference("never", "ping <!channel> & <@U0BOSS>", None)],
        notes=[],
        conversations=[],
    )
    view = home_view(USER, inventory, LINKS)

    [item] = [b for b in view["blocks"] if b.get("block_id") == "preference-0"]
    assert "&lt;!channel&gt; &amp; &lt;@U0BOSS&gt;" in item["text"]["text"]
    assert "<!channel>" not in item["text"]["text"]


def test_links_open_the_thread_in_the_dm_or_at_least_the_dm() -> None:
    assert LINKS.to(DM, "1714000000.000100") == (
        "https://orion-test.slack.com/archives/D0VIEW/p1714000000000100"
    )
    assert ThreadLinks(None, "T1").to(DM, "1714000000.000100") == (
        "https://slack.com/app_redirect?channel=D0VIEW&team=T1"
    )


def test_a_person_orion_knows_nothing_about_sees_that_and_no_buttons() -> None:
    empty = MemoryInventory(user_id=USER, preferences=[], notes=[], conversations=[])
    view = home_view(USER, empty, LINKS)
    assert NOTHING_KEPT in str(view["blocks"])
    # Nothing to forget or download; only the switch for memory notes, for later answers.
    assert not [b for b in view["blocks"] if b["type"] == "actions"]
    assert [b["accessory"]["action_id"] for b in view["blocks"] if "accessory" in b] == [
        ACTION_MEMORY_NOTES
    ]


@pytest.mark.parametrize(
    ("channel", "ts"),
    [
        ("javascript:alert(1)", "1714000000.000100"),
        ("D1|<!channel>", "1714000000.000100"),
        ("https://evil.example", "1714000000.000100"),
        (None, "1714000000.000100"),
        (DM, "1714000000.000100|<!here>"),
        (DM, None),
    ],
)
def test_no_link_unless_a_slack_channel_and_timestamp(channel: str | None, ts: str | None) -> None:
    assert LINKS.to(channel, ts) is None


def test_a_workspace_url_that_is_not_plain_https_falls_back_to_app_redirect() -> None:
    links = ThreadLinks("javascript:alert(1)//x.slack.com", "T1|<!channel>")
    assert links.to(DM, "1714000000.000100") == "https://slack.com/app_redirect?channel=D0VIEW"
