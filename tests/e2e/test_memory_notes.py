"""The note under an answer that changed memory, and its Undo, end to end.

Signed Slack events and clicks in, through the real Orion HTTP app; the fake Claude is
scripted to use its memory tool; memories live in the GCS emulator (behind the fault
proxy). What is asserted is what the person sees — the note in the thread, the note once
undone, the lines only they see — and what is in the bucket, object by object.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from app.learning import undo
from app.memory.homes import person, preferences_key
from app.slack.conversation.memory_note_blocks import UNDO_UNAVAILABLE
from app.slack.home.memory_view import (
    ACTION_FORGET_CONVERSATION,
    ACTION_FORGET_EVERYTHING,
    ACTION_MEMORY_NOTES,
    NOTES_OFF,
    NOTES_ON,
)
from tests import layout, log_events
from tests.e2e import conversation
from tests.e2e.conversation import tool_results
from tests.e2e.memory_bucket import Bucket
from tests.e2e.memory_notes import (
    answer_summaries,
    click_undo,
    note_lines,
    notes,
    undo_value,
    wait_for_ephemeral,
    wait_for_note,
)
from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.claude_script import new_tool_use_id
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, DM = "U0SAMUEL", "D0SAMUEL"
HOME = person(USER)
OWN = HOME.memory_prefix
UNDO_PREFIX = f"{HOME.prefix}undo/"
MEMORIES = f"/memories/users/{USER}"
TRAVEL = "Lisbon in May.\nHotel near the river.\n"
PREFERENCES = json.dumps({"name": "Sam"}, indent=2)


def memory_of(bucket: Bucket) -> dict[str, str]:
    """Everything in the person's own directory, by key."""
    return {key: bucket.read(key) or "" for key in bucket.names() if key.startswith(OWN)}


def ask(orion: OrionServer, slack: FakeSlack, thread_ts: str, text: str, answer: str) -> None:
    conversation.post_user_message(orion, slack, USER, DM, thread_ts, text)
    conversation.wait_for_answer(slack, DM, thread_ts, answer)


def memory_tool(command: str, **fields: Any) -> dict[str, Any]:
    return {"command": command, **fields}


def saved_hotel(orion: OrionServer, slack: FakeSlack, claude: FakeClaude) -> tuple[str, Any]:
    """An answer that creates the hotel note; the thread and its memory note."""
    thread_ts = slack.new_ts()
    claude.reply_tool_use(
        "memory", memory_tool("create", path=f"{MEMORIES}/notes/hotels.md", file_text="Rio\n")
    )
    claude.reply("Saved.")
    ask(orion, slack, thread_ts, "Remember the hotel.", "Saved.")
    return thread_ts, wait_for_note(slack, DM, thread_ts)


def moved_to_june(orion: OrionServer, slack: FakeSlack, claude: FakeClaude) -> tuple[str, Any]:
    """An answer that changes the travel note (May → June) and creates a hotel note; the
    thread and its memory note."""
    thread_ts = slack.new_ts()
    claude.reply_tool_use(
        "memory",
        memory_tool(
            "str_replace", path=f"{MEMORIES}/notes/travel.md", old_str="May", new_str="June"
        ),
    )
    claude.reply_tool_use(
        "memory", memory_tool("create", path=f"{MEMORIES}/notes/hotels.md", file_text="Rio\n")
    )
    claude.reply("Moved to June.")
    ask(orion, slack, thread_ts, "Lisbon moved to June.", "Moved to June.")
    return thread_ts, wait_for_note(slack, DM, thread_ts)


@pytest.fixture
def seeded(bucket: Bucket) -> Bucket:
    bucket.write(f"{OWN}notes/travel.md", TRAVEL)
    bucket.write(preferences_key(USER), PREFERENCES)
    return bucket


@pytest.fixture
def orion(
    orion_on_bucket: Callable[..., OrionServer], seeded: Bucket, claude: FakeClaude
) -> OrionServer:
    server = orion_on_bucket()
    answer_summaries(claude, server.settings.summary_model)
    return server


# --- the note ------------------------------------------------------------------------------


def test_an_answer_that_saved_shows_each_change_and_undo_puts_every_file_back_exactly(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    before = memory_of(seeded)
    thread_ts = slack.new_ts()
    claude.reply_tool_use(
        "memory",
        memory_tool("create", path=f"{MEMORIES}/notes/hotels.md", file_text="Casa do Rio\n"),
    )
    claude.reply_tool_use(
        "memory",
        memory_tool(
            "str_replace", path=f"{MEMORIES}/notes/travel.md", old_str="May", new_str="June"
        ),
    )
    claude.reply("Noted, Samuel: Lisbon in June.")
    said = "Please call me Samuel. Lisbon moved to June."
    ask(orion, slack, thread_ts, said, "Noted, Samuel: Lisbon in June.")

    note = wait_for_note(slack, DM, thread_ts)
    assert sorted(note_lines(note)) == [
        "Saved to memory: notes/hotels.md",
        "Updated: notes/travel.md",
        "Updated: preferences (name)",
    ]
    answer, shown_note = slack.bot_messages(DM, thread_ts)
    assert shown_note.ts == note.ts and answer.text == "Noted, Samuel: Lisbon in June."
    assert seeded.read(f"{OWN}notes/hotels.md") == "Casa do Rio\n"
    assert "Samuel" in (seeded.read(preferences_key(USER)) or "")
    # The button carries a random id, nothing else; the record is Orion's, in her home.
    value = undo_value(note)
    assert len(value) == 32 and USER not in value
    record = json.loads(seeded.read(HOME.undo_key(value)) or "{}")
    assert record["owner"] == USER

    click_undo(orion, slack, USER, DM, note)
    undone = slack.wait_for(
        lambda: (m := notes(slack, DM, thread_ts)[0]).edited and m, what="the note, undone"
    )

    assert memory_of(seeded) == before, "every file exactly as before the answer"
    assert undone.text == undo.UNDONE
    assert "accessory" not in json.dumps(undone.blocks), "no button left to click"
    assert all(line.startswith("~") for line in note_lines(undone))
    [line] = orion.wait_logged(log_events.MEMORY_UNDO)
    assert (line["outcome"], line["files"], line["user"]) == ("undone", 3, USER)

    # A second click (a double-click, a stale copy of the message) changes nothing.
    generations = seeded.generations()
    click_undo(orion, slack, USER, DM, note)
    assert wait_for_ephemeral(slack, USER) == undo.ALREADY_UNDONE
    assert memory_of(seeded) == before and seeded.generations() == generations


def test_an_answer_that_saved_nothing_has_no_note(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    thread_ts = slack.new_ts()
    claude.reply_tool_use("memory", memory_tool("view", path=f"{MEMORIES}/notes/travel.md"))
    claude.reply("You're going to Lisbon in May.")
    ask(orion, slack, thread_ts, "Where am I going?", "You're going to Lisbon in May.")
    orion.wait_logged(log_events.SLACK_USER_MESSAGE_DONE)

    assert [m.text for m in slack.bot_messages(DM, thread_ts)] == ["You're going to Lisbon in May."]
    assert not [key for key in seeded.names() if key.startswith(UNDO_PREFIX)]


def test_undo_brings_back_a_deleted_file_and_undoes_a_rename(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    seeded.write(f"{OWN}old.md", "An old note.\n")
    before = memory_of(seeded)
    thread_ts = slack.new_ts()
    claude.reply_tool_use("memory", memory_tool("delete", path=f"{MEMORIES}/old.md"))
    claude.reply_tool_use(
        "memory",
        memory_tool(
            "rename",
            old_path=f"{MEMORIES}/notes/travel.md",
            new_path=f"{MEMORIES}/trips/lisbon.md",
        ),
    )
    claude.reply("Tidied up.")
    ask(orion, slack, thread_ts, "Tidy my notes.", "Tidied up.")
    note = wait_for_note(slack, DM, thread_ts)
    assert note_lines(note) == ["Deleted: old.md", "Moved: notes/travel.md → trips/lisbon.md"]
    assert seeded.read(f"{OWN}trips/lisbon.md") == TRAVEL

    click_undo(orion, slack, USER, DM, note)
    slack.wait_for(lambda: notes(slack, DM, thread_ts)[0].edited, what="the note, undone")

    assert memory_of(seeded) == before


def test_a_file_changed_after_the_answer_is_never_overwritten_by_undo(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    thread_ts, note = moved_to_june(orion, slack, claude)
    seeded.write(f"{OWN}notes/travel.md", "Lisbon in July, edited later.\n")
    after = memory_of(seeded)

    click_undo(orion, slack, USER, DM, note)
    refusal = wait_for_ephemeral(slack, USER)

    assert refusal.startswith("Nothing was undone: notes/travel.md changed after this answer")
    assert memory_of(seeded) == after, "nothing undone, the later edit kept"
    assert not notes(slack, DM, thread_ts)[0].edited, "the Undo is still there"


def test_an_answer_whose_turn_end_wrote_the_summary_can_still_be_undone(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    """The summary is Orion's own rewrite at the end of every answer (kept with the
    conversation, and in the person's profile until the next turn): not a change the note
    names, nor one the Undo takes back."""
    before = memory_of(seeded)
    thread_ts = slack.new_ts()
    claude.reply_tool_use(
        "memory", memory_tool("create", path=f"{MEMORIES}/notes/hotels.md", file_text="Rio\n")
    )
    # Long enough to be summarised: the turn's end writes the summary after the answer.
    said = "We have booked the hotel by the river in Lisbon, Casa do Rio; keep it in mind."
    answer = "Noted the hotel, Casa do Rio by the river in Lisbon, for your trip in May."
    claude.reply(answer)
    ask(orion, slack, thread_ts, said, answer)
    note = wait_for_note(slack, DM, thread_ts)
    orion.wait_logged(log_events.MEMORY_AFTER_TURN)
    summary = layout.summary_of_latest(seeded.read(HOME.profile_key))
    assert summary == "The person's plans, noted."
    assert note_lines(note) == ["Saved to memory: notes/hotels.md"]

    click_undo(orion, slack, USER, DM, note)
    undone = slack.wait_for(
        lambda: (m := notes(slack, DM, thread_ts)[0]).edited and m, what="the note, undone"
    )

    assert undone.text == undo.UNDONE
    assert memory_of(seeded) == before
    assert layout.summary_of_latest(seeded.read(HOME.profile_key)) == summary, "it stays"


def test_a_turn_that_saved_many_files_shows_five_and_counts_the_rest(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    before = memory_of(seeded)
    thread_ts = slack.new_ts()
    # One reply asking for twelve files (as Claude may, several tool uses at once).
    creates = [
        memory_tool("create", path=f"{MEMORIES}/day-{n:02}.md", file_text=f"Day {n}\n")
        for n in range(12)
    ]
    claude.reply_blocks(
        [
            {"type": "tool_use", "id": new_tool_use_id(), "name": "memory", "input": create}
            for create in creates
        ]
    )
    claude.reply("Twelve days planned.")
    ask(orion, slack, thread_ts, "Plan twelve days.", "Twelve days planned.")

    note = wait_for_note(slack, DM, thread_ts)
    lines = note_lines(note)
    saved = {f"Saved to memory: day-{n:02}.md" for n in range(12)}
    assert len(lines) == 6 and len(set(lines[:5])) == 5 and set(lines[:5]) <= saved
    assert lines[5] == "…and 7 more"
    assert len(memory_of(seeded)) == len(before) + 12

    click_undo(orion, slack, USER, DM, note)
    slack.wait_for(lambda: notes(slack, DM, thread_ts)[0].edited, what="the note, undone")
    assert memory_of(seeded) == before, "all twelve went, not just the five shown"


# --- wherever the click lands -----------------------------------------------------------------


def test_undo_clicked_on_another_instance_after_a_restart_works_from_the_store_alone(
    orion_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    seeded: Bucket,
) -> None:
    first = orion_on_bucket()
    answer_summaries(claude, first.settings.summary_model)
    before = memory_of(seeded)
    thread_ts, note = saved_hotel(first, slack, claude)
    first.__exit__(None, None, None)  # the instance that wrote the note is gone

    second = orion_on_bucket()
    click_undo(second, slack, USER, DM, note)
    slack.wait_for(lambda: notes(slack, DM, thread_ts)[0].edited, what="the note, undone")

    assert memory_of(seeded) == before


def test_an_expired_undo_says_so_and_changes_nothing(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    _thread_ts, note = saved_hotel(orion, slack, claude)
    # The bucket's lifecycle rule deletes records older than the retention window.
    seeded.delete(HOME.undo_key(undo_value(note)))
    after = memory_of(seeded)

    click_undo(orion, slack, USER, DM, note)

    assert wait_for_ephemeral(slack, USER) == undo.EXPIRED
    assert memory_of(seeded) == after


def test_after_forget_everything_undo_does_nothing_and_says_why(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    _thread_ts, note = saved_hotel(orion, slack, claude)
    orion.wait_logged(log_events.MEMORY_AFTER_TURN)
    assert orion.post_event(events.app_home_opened(USER, DM, tab="home")).status_code == 200
    view = slack.wait_for(lambda: slack.home_view(USER), what="the Home tab")
    forget = events.view_block_actions(USER, view, ACTION_FORGET_EVERYTHING)
    assert orion.post_form(events.form_body(forget)).status_code == 200
    slack.wait_for(lambda: len(slack.home_views(USER)) > 1, what="the Home tab, after")

    click_undo(orion, slack, USER, DM, note)

    assert wait_for_ephemeral(slack, USER) == undo.ERASED
    orion.wait_idle()
    left = {key: seeded.read(key) or "" for key in seeded.names()}
    # Nothing of hers but the erasure's mark (her profile, holding when it was).
    assert [key for key, content in left.items() if USER in key or USER in content] == [
        HOME.profile_key
    ]
    assert set(json.loads(left[HOME.profile_key])) == {"version", "erased_at"}
    assert [key for key in left if key.startswith(UNDO_PREFIX)] == [], "the record went too"


def test_after_forgetting_the_conversation_undo_does_not_bring_back_what_the_answer_deleted(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    thread_ts = slack.new_ts()
    plan = f"{HOME.notes_prefix(thread_ts)}plan.md"
    old_plan = "The old plan: Porto first.\n"
    seeded.write(plan, old_plan)
    plan_path = f"/memories/sessions/{thread_ts.replace('.', '-')}/plan.md"
    claude.reply_tool_use("memory", memory_tool("delete", path=plan_path))
    # Long enough to be summarised: the conversation is then listed on the Home tab.
    said = "We are not going to Porto first after all, so please drop the old travel plan."
    answer = "Dropped the old plan: Porto is no longer first, and the trip starts in Lisbon."
    claude.reply(answer)
    ask(orion, slack, thread_ts, said, answer)
    note = wait_for_note(slack, DM, thread_ts)
    orion.wait_logged(log_events.MEMORY_AFTER_TURN)
    assert orion.post_event(events.app_home_opened(USER, DM, tab="home")).status_code == 200
    view = slack.wait_for(lambda: slack.home_view(USER), what="the Home tab")
    forget = events.view_block_actions(USER, view, ACTION_FORGET_CONVERSATION, thread_ts)
    assert orion.post_form(events.form_body(forget)).status_code == 200
    slack.wait_for(lambda: len(slack.home_views(USER)) > 1, what="the Home tab, after")

    click_undo(orion, slack, USER, DM, note)

    assert wait_for_ephemeral(slack, USER) == undo.EXPIRED
    orion.wait_idle()
    assert seeded.read(plan) is None, "what the person forgot stays forgotten"
    assert not [key for key in seeded.names() if key.startswith(HOME.notes_prefix(thread_ts))]
    left = {key: seeded.read(key) or "" for key in seeded.names()}
    # An undo record keeps old content as the hexadecimal digits of its bytes.
    kept = (old_plan, old_plan.encode().hex())
    assert [key for key, content in left.items() if any(k in content for k in kept)] == []
    assert [key for key in left if key.startswith(UNDO_PREFIX)] == []


# --- the worst conditions during the turn ------------------------------------------------------


def test_with_storage_down_during_the_turn_no_save_is_claimed(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    seeded: Bucket,
    gcs_proxy: FaultyProxy,
) -> None:
    before = memory_of(seeded)
    thread_ts = slack.new_ts()
    claude.reply_tool_use(
        "memory", memory_tool("create", path=f"{MEMORIES}/notes/hotels.md", file_text="Rio\n")
    )
    claude.reply("I couldn't save that just now.")
    gcs_proxy.add_rule("uploadType=multipart", status=503, method="POST")  # no write lands

    said = "Please call me Samuel. Remember the hotel."
    ask(orion, slack, thread_ts, said, "I couldn't save that just now.")
    orion.wait_logged(log_events.SLACK_USER_MESSAGE_DONE, timeout=30)

    assert notes(slack, DM, thread_ts) == []
    assert [m.text for m in slack.bot_messages(DM, thread_ts)] == ["I couldn't save that just now."]
    gcs_proxy.clear_rules()
    assert memory_of(seeded) == before


# --- the person's switch, and the operator's default --------------------------------------------


def open_home(orion: OrionServer, slack: FakeSlack) -> dict[str, Any]:
    before = len(slack.home_views(USER))
    assert orion.post_event(events.app_home_opened(USER, DM, tab="home")).status_code == 200
    return slack.wait_for(
        lambda: len(v := slack.home_views(USER)) > before and v[-1], what="the Home tab"
    )


def flip_notes_switch(orion: OrionServer, slack: FakeSlack, view: dict[str, Any]) -> dict[str, Any]:
    before = len(slack.home_views(USER))
    click = events.view_block_actions(USER, view, ACTION_MEMORY_NOTES)
    assert orion.post_form(events.form_body(click)).status_code == 200
    return slack.wait_for(
        lambda: len(v := slack.home_views(USER)) > before and v[-1], what="the Home tab, after"
    )


def saving_turn(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, name: str, turns: int
) -> str:
    """An answer that saves `name`; returns its thread once the listener is done."""
    thread_ts = slack.new_ts()
    claude.reply_tool_use(
        "memory", memory_tool("create", path=f"{MEMORIES}/{name}", file_text="Saved.\n")
    )
    claude.reply(f"Saved {name}.")
    ask(orion, slack, thread_ts, f"Remember {name}.", f"Saved {name}.")
    slack.wait_for(
        lambda: len(orion.logged(log_events.SLACK_USER_MESSAGE_DONE)) >= turns,
        what=f"{turns} turn(s) done",
    )
    return thread_ts


def test_the_home_tab_switch_hides_the_notes_and_shows_them_again(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    view = open_home(orion, slack)
    assert NOTES_ON in shown_text(view)

    off = flip_notes_switch(orion, slack, view)
    hidden = saving_turn(orion, slack, claude, "quiet.md", turns=1)

    assert NOTES_OFF in shown_text(off)
    assert json.loads(seeded.read(HOME.settings_key) or "{}") == {"memory_notes": False}
    assert seeded.read(f"{OWN}quiet.md") == "Saved.\n", "saved all the same"
    assert notes(slack, DM, hidden) == []
    assert [m.text for m in slack.bot_messages(DM, hidden)] == ["Saved quiet.md."]

    on = flip_notes_switch(orion, slack, off)
    shown = saving_turn(orion, slack, claude, "loud.md", turns=2)
    assert NOTES_ON in shown_text(on)
    assert note_lines(wait_for_note(slack, DM, shown)) == ["Saved to memory: loud.md"]


def test_with_memory_notes_off_by_default_a_person_can_still_turn_them_on(
    orion_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    seeded: Bucket,
) -> None:
    orion = orion_on_bucket(memory_notes=False)
    answer_summaries(claude, orion.settings.summary_model)
    hidden = saving_turn(orion, slack, claude, "quiet.md", turns=1)
    assert notes(slack, DM, hidden) == []

    view = open_home(orion, slack)
    assert NOTES_OFF in shown_text(view)
    flip_notes_switch(orion, slack, view)
    shown = saving_turn(orion, slack, claude, "loud.md", turns=2)
    assert note_lines(wait_for_note(slack, DM, shown)) == ["Saved to memory: loud.md"]


def shown_text(view: dict[str, Any]) -> str:
    return json.dumps(view["blocks"], ensure_ascii=False)


def test_with_storage_failing_right_after_the_turns_writes_the_note_says_so_without_undo(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    seeded: Bucket,
    gcs_proxy: FaultyProxy,
) -> None:
    thread_ts = slack.new_ts()
    create = memory_tool("create", path=f"{MEMORIES}/notes/hotels.md", file_text="Rio\n")

    def respond(body: dict[str, Any]) -> script.ScriptItem | None:
        if body["model"] != orion.settings.anthropic_model:
            return None
        if not tool_results(body):
            return script.tool_use("memory", create)
        # The memory tool's file is kept; from now on the bucket refuses every upload: the
        # undo record cannot be kept.
        gcs_proxy.add_rule("uploadType=multipart", status=503, method="POST")
        return script.text("Saved.")

    claude.responder = respond
    ask(orion, slack, thread_ts, "Remember the hotel.", "Saved.")
    note = wait_for_note(slack, DM, thread_ts)

    assert note_lines(note) == ["Saved to memory: notes/hotels.md"]
    assert UNDO_UNAVAILABLE in json.dumps(note.blocks)
    assert "accessory" not in json.dumps(note.blocks), "no Undo that could not work"
    assert seeded.read(f"{OWN}notes/hotels.md") == "Rio\n"
    [failed] = orion.wait_logged(log_events.MEMORY_NOTE_UNDO_FAILED)
    assert "Traceback" in failed["exception"]
    # The turn's end, still retrying its uploads, then lands: Orion stops without waiting
    # out their retry budgets.
    gcs_proxy.clear_rules()


# --- what Undo restores is exactly what was there ----------------------------------------------


@pytest.mark.parametrize(
    "kept",
    [
        # Each already as the store keeps it (nothing in it is a secret's shape), but as
        # JSON text a line break is `\n`, and `password:\nask` then reads as a label and
        # its value: restored exactly, not with "[redacted]" in the middle.
        "Wi-Fi password:\nask the front desk\n",
        # Redacting inside the quotes broke the record's JSON: "can't be undone any more".
        '## Wi-Fi password:\n"ask IT"',
    ],
    ids=["line-break-after-a-label", "quoted-line-after-a-label"],
)
def test_undo_restores_a_note_exactly_even_where_its_json_would_look_like_a_secret(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket, kept: str
) -> None:
    seeded.write(f"{OWN}wifi.md", kept)
    before = memory_of(seeded)
    thread_ts = slack.new_ts()
    claude.reply_tool_use(
        "memory",
        memory_tool("str_replace", path=f"{MEMORIES}/wifi.md", old_str="Wi-Fi", new_str="WiFi"),
    )
    claude.reply("Updated the Wi-Fi note.")
    ask(orion, slack, thread_ts, "Spell it WiFi.", "Updated the Wi-Fi note.")
    note = wait_for_note(slack, DM, thread_ts)
    assert note_lines(note) == ["Updated: wifi.md"]
    assert seeded.read(f"{OWN}wifi.md") == kept.replace("Wi-Fi", "WiFi")

    click_undo(orion, slack, USER, DM, note)
    undone = slack.wait_for(
        lambda: (m := notes(slack, DM, thread_ts)[0]).edited and m, what="the note, undone"
    )

    assert undone.text == undo.UNDONE
    assert seeded.read(f"{OWN}wifi.md") == kept
    assert memory_of(seeded) == before


# --- an undo that storage cut short can be finished ---------------------------------------------


def test_an_undo_the_click_deadline_cut_short_can_be_clicked_again(
    orion_on_bucket: Callable[..., OrionServer],
    slack: FakeSlack,
    claude: FakeClaude,
    seeded: Bucket,
    gcs_proxy: FaultyProxy,
) -> None:
    # The click's storage budget is twice this: a second.
    orion = orion_on_bucket(memory_load_timeout_s=0.5)
    answer_summaries(claude, orion.settings.summary_model)
    before = memory_of(seeded)
    thread_ts, note = saved_hotel(orion, slack, claude)
    # Undoing means deleting the file: storage takes longer than the click may wait, and
    # then fails (so nothing was deleted).
    gcs_proxy.add_rule("notes/hotels.md", delay=3, status=503, method="DELETE", times=1)

    click_undo(orion, slack, USER, DM, note)
    assert wait_for_ephemeral(slack, USER) == undo.UNAVAILABLE
    assert seeded.read(f"{OWN}notes/hotels.md") == "Rio\n"

    click_undo(orion, slack, USER, DM, note)
    undone = slack.wait_for(
        lambda: (m := notes(slack, DM, thread_ts)[0]).edited and m, what="the note, undone"
    )
    assert undone.text == undo.UNDONE, "not 'Already undone': the first click's claim went"
    assert memory_of(seeded) == before


def test_a_retry_after_storage_failed_partway_finishes_what_the_first_click_began(
    orion: OrionServer,
    slack: FakeSlack,
    claude: FakeClaude,
    seeded: Bucket,
    gcs_proxy: FaultyProxy,
) -> None:
    before = memory_of(seeded)
    thread_ts, note = moved_to_june(orion, slack, claude)
    # The old travel note goes back; deleting the new hotel note is refused.
    gcs_proxy.add_rule("notes/hotels.md", status=403, method="DELETE")

    click_undo(orion, slack, USER, DM, note)
    assert wait_for_ephemeral(slack, USER) == undo.UNAVAILABLE
    assert seeded.read(f"{OWN}notes/travel.md") == TRAVEL
    assert seeded.read(f"{OWN}notes/hotels.md") == "Rio\n"
    gcs_proxy.clear_rules()

    click_undo(orion, slack, USER, DM, note)
    undone = slack.wait_for(
        lambda: (m := notes(slack, DM, thread_ts)[0]).edited and m, what="the note, undone"
    )
    assert undone.text == undo.UNDONE, "travel.md was put back by the undo, not changed since"
    assert memory_of(seeded) == before


# --- within Slack's limits, whatever the names ---------------------------------------------------


def test_names_full_of_ampersands_keep_the_note_and_the_refusal_within_slacks_limits(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    """`&` is five characters once escaped: five such names made a section longer than
    Slack takes (3,000 characters), and the note or the refusal never showed."""
    names = [f"{'&' * 150}{n}.md" for n in range(5)]
    thread_ts = slack.new_ts()
    claude.reply_blocks(
        [
            {
                "type": "tool_use",
                "id": new_tool_use_id(),
                "name": "memory",
                "input": memory_tool("create", path=f"{MEMORIES}/{name}", file_text="&\n"),
            }
            for name in names
        ]
    )
    claude.reply("Saved five.")
    ask(orion, slack, thread_ts, "Save five.", "Saved five.")

    note = wait_for_note(slack, DM, thread_ts)
    lines = note_lines(note)
    assert len(lines) == 5 and all(len(line) <= 200 for line in lines)
    assert all(line.startswith("Saved to memory: &amp;&amp;") for line in lines)
    assert all(line.endswith("&amp;…") for line in lines), "cut whole entities only"

    for name in names:  # each changed after the answer
        seeded.write(f"{OWN}{name}", "Edited later.\n")
    click_undo(orion, slack, USER, DM, note)
    refusal = wait_for_ephemeral(slack, USER)

    assert refusal.startswith("Nothing was undone: &amp;&amp;")
    [shown] = [c for c in slack.calls_to("chat.postEphemeral") if c.args["user"] == USER]
    assert shown.error is None, "Slack took the refusal"
    [block] = shown.args["blocks"]
    assert block["text"]["text"].startswith("Nothing was undone: &amp;&amp;")
    assert "and undoing now would lose that change" in block["text"]["text"]


def test_an_undo_whose_note_cannot_be_rewritten_still_tells_the_person_it_worked(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude, seeded: Bucket
) -> None:
    before = memory_of(seeded)
    _thread_ts, note = saved_hotel(orion, slack, claude)
    slack.inject_error("chat.update", "message_not_found", status=200)  # deleted meanwhile

    click_undo(orion, slack, USER, DM, note)

    assert wait_for_ephemeral(slack, USER) == undo.UNDONE
    assert memory_of(seeded) == before
