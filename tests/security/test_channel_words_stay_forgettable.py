"""A member's words in a channel thread are kept only where Forget everything finds them.

The channel threads holding a member's words are noted in their own home, which is how
Forget everything reaches them. Played end to end (the real Orion HTTP app, fake Slack and
Claude, the GCS emulator): Ana, whose settings cannot be read, speaks in a public channel —
Orion answers and keeps her words (the thread is noted beside her settings, not in them),
her Home tab counts the thread, and her Forget everything takes every word of hers out of
the bucket; and Ana, forgetting everything while Orion answers her in a channel, leaves no
word of hers in the bucket: not in the thread's transcript, nor in a summary, search entry
or welcome made from the turn that still held them. Nor are the words a member wrote in a
thread before asking to be forgotten kept, or summarised, when Orion later reads the
thread from Slack — also when their profile, which says when, cannot be read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from app.learning.search_index import parse_search_index
from app.memory.homes import channel, person, preferences_key
from app.slack.home import controls
from app.slack.home.memory_view import ACTION_FORGET_EVERYTHING as ERASE
from app.slack.home.memory_view import ACTION_MEMORY_NOTES, CHANNEL_THREADS, NOTES_HIDE
from tests import log_events
from tests.e2e import channels as in_channel
from tests.e2e.channels import ANA, BEN, PUBLIC, mention, set_up_channels, thread_of
from tests.e2e.home import click, open_home, shown
from tests.e2e.memory_bucket import Bucket
from tests.e2e.test_memory_controls import everything_in
from tests.fakes import claude_script as script
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

WORDS = "the pelican mascot for the Zanzibar offsite needs a bigger budget by Friday noon"
BENS_WORDS = "and the print shop wants the artwork in CMYK"
# Cut short: it listed another thread of hers in #launch.
BROKEN = '{"said_in": [["C0PUBLIC1", "1776000000.000100"]], "memory_no'


def test_a_member_with_broken_settings_is_answered_and_forgets_everything_she_said(
    orion_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
) -> None:
    set_up_channels(slack)
    orion = orion_on_bucket()
    settings = person(ANA).settings_key
    bucket.write(settings, BROKEN)
    summary_model = orion.settings.summary_model
    claude.responder = lambda body: (
        script.text("# Launch thread\nThe channel talked about the launch.")
        if body["model"] == summary_model
        else None
    )
    claude.reply("Noted.")
    said = thread_of(mention(orion, slack, BEN, PUBLIC, BENS_WORDS))
    in_channel.wait_for_answer(slack, PUBLIC, said, "Noted.")
    orion.wait_idle()
    claude.reply("Noted, Ana.")
    mention(orion, slack, ANA, PUBLIC, WORDS, thread_ts=said)
    in_channel.wait_for_answer(slack, PUBLIC, said, "Noted, Ana.")
    orion.wait_idle()

    room = channel(PUBLIC)
    kept = bucket.read(room.conversation_key(said)) or ""
    assert "CMYK" in kept and "pelican" in kept, "her words are kept: Forget everything finds them"
    assert bucket.read(settings) == BROKEN, "left as it is for a repair"
    view = open_home(orion, slack, ANA, slack.dm_channel(ANA))
    assert CHANNEL_THREADS.format(count=2) in shown(view), "the #launch threads she spoke in"
    after = click(orion, slack, ANA, view, ACTION_MEMORY_NOTES, NOTES_HIDE)
    assert controls.NOTES_FAILED in shown(after)
    assert bucket.read(settings) == BROKEN
    lines = orion.logged(log_events.MEMORY_RECORD_UNREADABLE)
    assert lines and {line["file"] for line in lines} == {"settings"}

    before = len(orion.logged(log_events.MEMORY_FORGET))
    click(orion, slack, ANA, open_home(orion, slack, ANA, slack.dm_channel(ANA)), ERASE)
    slack.wait_for(lambda: len(orion.logged(log_events.MEMORY_FORGET)) > before, what="erasure")
    orion.wait_idle()

    assert "CMYK" in (bucket.read(room.conversation_key(said)) or ""), "Ben's words are kept"
    assert [key for key, text in everything_in(bucket).items() if "pelican" in text] == []
    assert not parse_search_index(bucket.read(room.search_key)).postings("pelican")
    assert [n for n in bucket.names() if n.startswith(person(ANA).prefix)] == [
        person(ANA).profile_key
    ]
    assert orion.http.get("/healthz").status_code == 200


def test_a_member_who_forgets_everything_while_orion_answers_her_in_a_channel(
    orion_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
) -> None:
    set_up_channels(slack)
    bucket.write(preferences_key(ANA), '{"name": "Ana"}')  # her Home tab has something
    orion = orion_on_bucket()
    summary_model = orion.settings.summary_model
    # The summary model writes down whatever it is sent about the pelican.
    claude.responder = lambda body: (
        script.text(
            "# Launch thread\n" + ("The pelican mascot." if "pelican" in str(body) else "-")
        )
        if body["model"] == summary_model
        else None
    )
    claude.reply("Noted.")
    said = thread_of(mention(orion, slack, BEN, PUBLIC, BENS_WORDS))
    in_channel.wait_for_answer(slack, PUBLIC, said, "Noted.")
    orion.wait_idle()

    # Ana speaks in the thread; while Orion answers her, she forgets everything.
    held = claude.hold()
    claude.reply("Noted, Ana.")
    calls = len(claude.calls)
    mention(orion, slack, ANA, PUBLIC, WORDS, thread_ts=said)
    claude.wait_for(lambda: len(claude.calls) > calls, what="the turn's Claude call")
    before = len(orion.logged(log_events.MEMORY_FORGET))
    click(orion, slack, ANA, open_home(orion, slack, ANA, slack.dm_channel(ANA)), ERASE)
    slack.wait_for(lambda: len(orion.logged(log_events.MEMORY_FORGET)) > before, what="erasure")
    held.set()
    in_channel.wait_for_answer(slack, PUBLIC, said, "Noted, Ana.")
    orion.wait_idle()

    room = channel(PUBLIC)
    assert "CMYK" in (bucket.read(room.conversation_key(said)) or ""), "Ben's words are kept"
    assert [key for key, text in everything_in(bucket).items() if "pelican" in text] == []
    assert not parse_search_index(bucket.read(room.search_key)).postings("pelican")


@pytest.mark.parametrize("readable", [True, False], ids=["her profile", "it broken since"])
def test_words_a_member_wrote_before_asking_to_be_forgotten_are_not_kept(
    orion_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: Bucket,
    readable: bool,
) -> None:
    set_up_channels(slack)
    orion = orion_on_bucket()
    # Ana spoke in a #launch thread, then asked to be forgotten (her profile says when;
    # or said, before it broke). Orion had not been mentioned there yet.
    top = slack.add_user_message(PUBLIC, None, BEN, "Launch thread: ideas welcome")
    hers = slack.add_user_message(PUBLIC, top, ANA, WORDS)
    erased_at = datetime.fromtimestamp(float(hers), UTC) + timedelta(seconds=1)
    erased = json.dumps({"version": 2, "erased_at": erased_at.isoformat()})
    bucket.write(person(ANA).profile_key, erased if readable else erased[:-4])

    # Ben mentions Orion in the thread: it reads the thread from Slack, keeps it and
    # summarises it (the fake summary model writes back all it was sent).
    claude.reply("Noted.")
    mention(orion, slack, BEN, PUBLIC, BENS_WORDS, thread_ts=top)
    in_channel.wait_for_answer(slack, PUBLIC, top, "Noted.")
    orion.wait_idle()

    assert "CMYK" in (bucket.read(channel(PUBLIC).conversation_key(top)) or "")
    assert [key for key, text in everything_in(bucket).items() if "pelican" in text] == []
