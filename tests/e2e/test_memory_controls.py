"""People see, correct and erase what Orion remembers about them: the Home tab.

End to end through signed events and interactivity payloads: the real Orion HTTP app,
the fake Slack (views.publish, files_upload_v2, conversations.open) and memories in the
GCS emulator. The assertions are what the person sees (their Home tab, the file in their
DM, the next greeting) and what is left in the bucket (listed whole), never timings:
`bench/memory_erasure.py` measures how long forgetting everything takes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from app.learning.timestamps import format_time
from app.memory.homes import person, preferences_key
from app.memory.key_prefixes import KEY_PREFIXES
from app.slack.conversation.greeting import GENERIC_GREETING
from app.slack.home import controls
from app.slack.home.memory_view import (
    ACTION_DOWNLOAD,
    ACTION_FORGET_EVERYTHING,
    ACTION_FORGET_NOTE,
    ACTION_FORGET_PREFERENCE,
    UNAVAILABLE,
)
from tests import layout, log_events
from tests.e2e import conversation
from tests.e2e.conversation import open_thread
from tests.e2e.home import click, open_home, shown
from tests.e2e.memory_bucket import Bucket
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings
from tests.span_log import SpanLog

USER, DM = "U0MIRA", "D0MIRA"
OTHER, OTHER_DM = "U0OTTO", "D0OTTO"
WORKSPACE = "https://orion-test.slack.com"
# Seeded straight into the bucket (a write through Orion would have redacted it).
SECRET = "xoxb-1111-2222-SEEDEDSECRETVALUE"
THREAD, OTHER_THREAD = "1777000000.000100", "1777000500.000200"
NOTE_NAME = "projects/launch.md"
NOTE = (
    "# Launch checklist\n"
    "Ship the billing page on Friday.\n"
    "Ask Dana for the copy.\n"
    f"Staging token: {SECRET}\n"
    "Last line: celebrate with the team.\n"
)
TITLE = "Billing page launch plan"
SUMMARY = "Mira planned the billing page launch: copy from Dana, ship on Friday."
# Recent, so within any retention window; to the second, as Orion writes times.
LEARNED = datetime.now(UTC).replace(microsecond=0) - timedelta(days=2)
UPDATED = LEARNED + timedelta(hours=3)


# --- the person's memory, seeded ------------------------------------------------------------


def mira() -> dict[str, str]:
    """Everything Orion keeps about Mira, as objects."""
    learned = {"at": format_time(LEARNED), "channel": DM, "thread": THREAD}
    preferences = {
        "name": "Mira",
        "language": "French",
        "_learned": {"name": learned, "language": learned},
    }
    # Slack's context of the thread, as kept with the conversation (seeded with a secret:
    # a write through Orion would have redacted it).
    context = {"channel_id": "C0LAUNCH", "note": f"name: Mira ({SECRET})"}
    return {
        preferences_key(USER): json.dumps(preferences),
        f"{person(USER).memory_prefix}{NOTE_NAME}": NOTE,
        person(USER).profile_key: layout.profile(
            conversations=[(THREAD, TITLE)], channel_id=DM, at=UPDATED
        ),
        layout.conversation_key(USER, THREAD): layout.conversation(
            USER, THREAD, channel_id=DM, summary=SUMMARY, title=TITLE, at=UPDATED, context=context
        ),
    }


def otto() -> dict[str, str]:
    """Another person's memory, which nothing Mira does may touch."""
    return {
        preferences_key(OTHER): json.dumps({"name": "Otto", "language": "German"}),
        person(OTHER).profile_key: layout.profile(
            conversations=[(OTHER_THREAD, "Otto's roadmap")], channel_id=OTHER_DM, at=UPDATED
        ),
        layout.conversation_key(OTHER, OTHER_THREAD): layout.conversation(
            OTHER,
            OTHER_THREAD,
            channel_id=OTHER_DM,
            summary="Otto's roadmap.",
            title="Roadmap",
            at=UPDATED,
        ),
    }


def left_of(bucket: Bucket, user: str) -> dict[str, str]:
    """What the bucket still holds of `user`: any object naming them, by key or content,
    but the mark their erasure leaves (their profile, holding only when it was)."""
    left = {
        key: content
        for key, content in everything_in(bucket).items()
        if user in key or user in content
    }
    mark = left.pop(person(user).profile_key, None)
    assert mark is None or set(json.loads(mark)) == {"version", "erased_at"}, mark
    return left


def seed(bucket: Bucket, objects: dict[str, str]) -> None:
    for key, content in objects.items():
        bucket.write(key, content)


def everything_in(bucket: Bucket) -> dict[str, str]:
    """The whole bucket: every object's key and content."""
    return {name: bucket.read(name) or "" for name in bucket.names()}


# --- what the person does and sees ------------------------------------------------------------


def section_with(view: dict[str, Any], needle: str) -> str:
    """The text of the one section that mentions `needle`."""
    [text] = [
        b["text"]["text"]
        for b in view["blocks"]
        if b["type"] == "section" and needle in b["text"]["text"]
    ]
    return text


def link(channel: str, ts: str) -> str:
    return f"{WORKSPACE}/archives/{channel}/p{ts.replace('.', '')}"


# --- fixtures ---------------------------------------------------------------------------------


@pytest.fixture
def seeded(bucket: Bucket) -> Bucket:
    seed(bucket, mira())
    seed(bucket, otto())
    return bucket


@pytest.fixture
def orion(orion_on_bucket: Callable[..., OrionServer], seeded: Bucket) -> OrionServer:
    return orion_on_bucket()


# --- 1. see it --------------------------------------------------------------------------------


def test_the_home_tab_shows_each_preference_note_and_conversation_with_date_and_link(
    orion: OrionServer, slack: FakeSlack
) -> None:
    view = open_home(orion, slack, USER, DM)

    assert view["type"] == "home"
    preference = section_with(view, "French")
    assert LEARNED.strftime("%Y-%m-%d") in preference, "when it was learned"
    assert link(DM, THREAD) in preference, "the thread it came from"
    note = section_with(view, NOTE_NAME)
    assert f"{len(NOTE.encode())} bytes" in note
    assert "changed <!date^" in note and datetime.now(UTC).strftime("%Y-%m-%d") in note
    assert "Launch checklist" in note and "Last line" not in note, "its first lines"
    conversation = section_with(view, TITLE)
    assert UPDATED.strftime("%Y-%m-%d") in conversation and link(DM, THREAD) in conversation
    assert SUMMARY in shown(view)
    # Every item can be forgotten; everything can be, behind Slack's confirm dialog.
    assert {b["value"] for _, b in events.buttons(view) if b["text"]["text"] == "Forget"} == {
        "name",
        "language",
        NOTE_NAME,
        THREAD,
    }
    _, everything = events.find_button(view, ACTION_FORGET_EVERYTHING)
    assert everything["confirm"]["style"] == "danger" and everything["style"] == "danger"
    events.find_button(view, ACTION_DOWNLOAD)
    # Only their own: nothing of Otto's.
    assert "Otto" not in shown(view) and "German" not in shown(view)
    # Logged with counts, never content.
    [line] = orion.wait_logged(log_events.MEMORY_SHOW)
    assert (line["user"], line["preferences"], line["notes"], line["conversations"]) == (
        USER,
        2,
        1,
        1,
    )
    assert "French" not in orion.log_stream.getvalue() and SECRET not in orion.log_stream.getvalue()


# --- 2. forget one thing ----------------------------------------------------------------------


def test_forget_on_a_preference_removes_it_from_the_bucket_and_the_home_tab(
    orion: OrionServer, slack: FakeSlack, seeded: Bucket
) -> None:
    view = open_home(orion, slack, USER, DM)

    after = click(orion, slack, USER, view, ACTION_FORGET_PREFERENCE, "language")

    stored = json.loads(seeded.read(preferences_key(USER)) or "{}")
    assert "language" not in stored and "language" not in stored["_learned"]
    assert stored["name"] == "Mira", "only that one"
    assert controls.FORGOTTEN["preference"] in shown(after)
    assert "French" not in shown(after) and "Mira" in shown(after)
    [line] = orion.wait_logged(log_events.MEMORY_FORGET)
    assert (line["kind"], line["objects"], line["via"]) == ("preference", 1, "home")

    # A note goes the same way, by its file name in the person's own directory.
    after_note = click(orion, slack, USER, after, ACTION_FORGET_NOTE, NOTE_NAME)
    assert seeded.read(f"{person(USER).memory_prefix}{NOTE_NAME}") is None
    assert NOTE_NAME not in shown(after_note)


# --- 3. forget everything ---------------------------------------------------------------------


def test_forget_everything_leaves_nothing_of_the_person_and_the_next_thread_greets_generically(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    # A real thread first: Orion greets Mira by name and records the conversation as hers.
    thread_ts, greeting = open_thread(orion, slack, USER, DM)
    assert greeting.startswith("Bon retour, Mira !"), "in her language, French"
    seeded.wait_for(layout.conversation_key(USER, thread_ts), lambda content: USER in content)
    orion.wait_idle()
    others = {key: seeded.read(key) for key in otto()}
    generations = {k: g for k, g in seeded.generations().items() if k in others}
    view = open_home(orion, slack, USER, DM)
    _, button = events.find_button(view, ACTION_FORGET_EVERYTHING)
    assert button["confirm"]["confirm"]["text"] == "Forget everything"

    after = click(orion, slack, USER, view, ACTION_FORGET_EVERYTHING)  # confirmed

    assert left_of(seeded, USER) == {}
    left = everything_in(seeded)
    assert [key for key, content in left.items() if SECRET in content or "Mira" in content] == []
    assert {key: left.get(key) for key in others} == others, "Otto's memory is untouched"
    assert {k: g for k, g in seeded.generations().items() if k in others} == generations
    assert controls.FORGOT_EVERYTHING in shown(after)
    assert "French" not in shown(after) and NOTE_NAME not in shown(after)
    [line] = orion.wait_logged(log_events.MEMORY_FORGET)
    # Every object of hers but the profile (her erasure's mark), and the new thread's.
    assert line["kind"] == "everything" and line["objects"] >= len(mira())
    assert line["user"] == USER and "duration_ms" in line

    thread_ts, greeting = open_thread(orion, slack, USER, DM)
    assert greeting == GENERIC_GREETING
    # And Claude's next request carries none of it.
    claude.reply("Hello! What should I call you?")
    conversation.post_user_message(orion, slack, USER, DM, thread_ts, "Hi, who am I?")
    conversation.wait_for_messages(slack, DM, thread_ts, 1, after_greeting=True)
    [request] = conversation.main_requests(claude, orion)
    for forgotten in ("Mira", "French", "launch", SECRET):
        assert forgotten not in json.dumps(request), forgotten
    # Claims, the erasure's mark, a conversation: each under a prefix of the one list.
    orion.wait_idle()
    listed = tuple(kind.prefix for kind in KEY_PREFIXES)
    assert [key for key in seeded.names() if not key.startswith(listed)] == []


def test_a_turn_finishing_while_its_person_erases_everything_writes_nothing_back(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    thread_ts, _ = open_thread(orion, slack, USER, DM)
    # A slow answer: the person erases everything while Claude is still writing it, and the
    # turn's end — its summary, index, welcome, and the preference it states — comes after.
    claude.reply("Noted, Mira. " * 40, chunk_delay=0.05)
    conversation.post_user_message(
        orion, slack, USER, DM, thread_ts, "Please call me Mira. Let's plan the launch again."
    )
    slack.wait_for(lambda: slack.calls_to("chat.startStream"), what="the answer to start")
    view = open_home(orion, slack, USER, DM)
    click(orion, slack, USER, view, ACTION_FORGET_EVERYTHING)

    conversation.wait_for_messages(slack, DM, thread_ts, 1, after_greeting=True)
    orion.wait_logged(log_events.MEMORY_AFTER_TURN)
    orion.wait_idle()
    assert left_of(seeded, USER) == {}
    assert [key for key, content in everything_in(seeded).items() if "Mira" in content] == []
    assert orion.logged(log_events.MEMORY_ERASED_DURING_EVENT), "the turn took its writes back"


# --- 4. export --------------------------------------------------------------------------------


def test_download_posts_a_markdown_file_with_every_item_in_the_persons_dm(
    orion: OrionServer, slack: FakeSlack
) -> None:
    view = open_home(orion, slack, USER, DM)

    after = click(orion, slack, USER, view, ACTION_DOWNLOAD)

    [file] = slack.files(DM)
    assert file.filename.endswith(".md") and file.title == controls.FILE_TITLE
    for item in ("Mira", "French", NOTE_NAME, NOTE.strip(), TITLE, SUMMARY):
        assert item in file.text, item
    assert [m.subtype for m in slack.messages(DM)] == ["file_share"], "posted in their DM"
    assert controls.SENT in shown(after)
    [line] = orion.wait_logged(log_events.MEMORY_EXPORT)
    assert (line["preferences"], line["notes"], line["conversations"]) == (2, 1, 1)
    assert line["bytes"] == len(file.text.encode())


def test_every_show_forget_and_export_is_traced_with_counts_never_content(
    spans: SpanLog, orion: OrionServer, slack: FakeSlack
) -> None:
    view = open_home(orion, slack, USER, DM)
    view = click(orion, slack, USER, view, ACTION_DOWNLOAD)
    click(orion, slack, USER, view, ACTION_FORGET_PREFERENCE, "language")
    slack.wait_for(lambda: spans.named("slack.memory_forget"), what="the forget's trace")

    [show, *_] = spans.named("memory.show")
    assert spans.attributes(show)["langfuse.observation.output"]["preferences"] == 2
    [export] = spans.named("memory.export")
    assert spans.attributes(export)["langfuse.observation.output"]["notes"] == 1
    [forget] = spans.named("memory.forget")
    assert spans.attributes(forget)["langfuse.observation.output"] == {"objects": 1}
    for root in ("slack.home_opened", "slack.memory_download", "slack.memory_forget"):
        [span] = spans.named(root)
        assert spans.attributes(span)["user.id"] == USER
    assert "French" not in spans.text() and SECRET not in spans.text()


# --- 5. only one's own ------------------------------------------------------------------------


def test_a_click_from_another_person_cannot_read_or_erase_the_home_tab_owners_memory(
    orion: OrionServer, slack: FakeSlack, seeded: Bucket
) -> None:
    before = everything_in(seeded)
    generations = seeded.generations()
    miras = {key: before[key] for key in mira()}
    view = open_home(orion, slack, USER, DM)  # Mira's own view

    # Otto replays clicks on Mira's view: each acts on Otto, and only Otto sees a result.
    download = click(orion, slack, OTHER, view, ACTION_DOWNLOAD)
    forgot = click(orion, slack, OTHER, view, ACTION_FORGET_PREFERENCE, "language")
    erased = click(orion, slack, OTHER, view, ACTION_FORGET_EVERYTHING)

    [file] = slack.files()
    assert file.channels == [OTHER_DM], "sent to the clicking person's own DM"
    assert "Otto" in file.text and "Mira" not in file.text and "French" not in file.text
    for seen in (download, forgot, erased):
        assert "Mira" not in shown(seen) and "French" not in shown(seen)
    assert slack.home_views(USER) == [view], "nothing published to Mira's tab"
    after = everything_in(seeded)
    assert {key: after.get(key) for key in miras} == miras, "Mira's memory is all there"
    assert {k: seeded.generations().get(k) for k in miras} == {k: generations[k] for k in miras}
    assert preferences_key(OTHER) not in after, "Otto erased his own"


# --- 6. storage down --------------------------------------------------------------------------


def test_storage_down_shows_a_friendly_home_tab_and_the_service_stays_healthy(
    orion_on_bucket: Callable[..., OrionServer],
    gcs_proxy: FaultyProxy,
    seeded: Bucket,
    slack: FakeSlack,
) -> None:
    orion = orion_on_bucket(memory_load_timeout_s=0.5)
    view = open_home(orion, slack, USER, DM)
    gcs_proxy.add_rule("", status=503)  # every request to the bucket fails

    down = open_home(orion, slack, USER, DM)
    after_click = click(orion, slack, USER, view, ACTION_FORGET_PREFERENCE, "language")

    assert UNAVAILABLE in shown(down)
    assert controls.FORGET_FAILED in shown(after_click)
    for seen in (down, after_click):
        text = json.dumps(seen)
        # (A view's own timestamps may hold the digits 503: only the status counts.)
        assert not re.search(r"\b503\b", text)
        assert "Error" not in text and "Traceback" not in text
        assert events.buttons(seen) == [], "nothing to click that cannot work"
    [failed, *_] = orion.wait_logged(log_events.MEMORY_SHOW_FAILED)
    assert "Traceback" in failed["exception"] and failed["user"] == USER
    assert orion.wait_logged(log_events.MEMORY_FORGET_FAILED)[0]["kind"] == "preference"
    assert orion.http.get("/healthz").status_code == 200
    gcs_proxy.clear_rules()
    assert "language" in (seeded.read(preferences_key(USER)) or "")


# --- both experiences -------------------------------------------------------------------------


@pytest.fixture
def agent_slack() -> Iterator[FakeSlack]:
    with FakeSlack(agent_view=True) as fake:
        yield fake


def test_in_agent_view_the_home_tab_and_the_messages_tab_both_work(
    agent_slack: FakeSlack, claude: FakeClaude, memory_dir: Path
) -> None:
    for key, content in mira().items():
        path = memory_dir / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    settings = make_settings(agent_slack, claude, memory_dir=memory_dir, slack_experience="agent")
    with OrionServer(settings) as orion:
        view = open_home(orion, agent_slack, USER, DM)
        assert orion.post_event(events.app_home_opened(USER, DM, tab="messages")).status_code == 200
        [prompts] = agent_slack.wait_for(lambda: agent_slack.messages_tab_prompts(DM))

    assert "French" in shown(view) and link(DM, THREAD) in section_with(view, "French")
    assert prompts.prompts, "the Messages tab still gets its prompts"
