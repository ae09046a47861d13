"""The memory stores written by Orion at f2d2af8 (tests/data/legacy_2026_11_28/) hold what
their README and expected.json say: every person's preferences, notes, conversations,
erasure and channel thread where today's layout put them, parseable, small and free of
secrets. The upgrade test (issue 43) serves these stores with the new code; this one keeps
the data itself honest, so that a store damaged by hand fails here and not there."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from app.observability.redaction import redact_secret_shapes

DATA = Path(__file__).resolve().parents[1] / "data" / "legacy_2026_11_28"
EXPECTED: dict[str, Any] = json.loads((DATA / "expected.json").read_text())
STORES: dict[str, dict[str, Any]] = EXPECTED["stores"]
# Deployment-wide prefixes: never scoped by team (docs/distribution.md).
DEPLOYMENT_WIDE = ("installations/", "oauth-states/")


def objects(store: str) -> dict[str, bytes]:
    """Every object of the store, by key (its path under the store's directory)."""
    root = DATA / store
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def key(store: str, name: str) -> str:
    """`name` (a key as one workspace spells it) as the store spells it: in distribution
    mode, with the team's scope after the first segment."""
    if name.startswith(DEPLOYMENT_WIDE):
        return name
    first, rest = name.split("/", 1)
    return f"{first}/{STORES[store]['team_scope']}{rest}"


def read(store: str, name: str) -> str:
    path = DATA / store / key(store, name)
    assert path.is_file(), f"{key(store, name)} is not in {store}"
    return path.read_text()


def dashed(thread_ts: str) -> str:
    return thread_ts.replace(".", "-")


def search_header(text: str) -> dict[str, Any]:
    """A search index's JSON line (the postings follow it as plain text)."""
    header: dict[str, Any] = json.loads(text.split("\n", 1)[0])
    return header


def when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


PEOPLE = [(store, p) for store, spec in STORES.items() for p in spec["people"]]
PEOPLE_IDS = [f"{store}:{p['user']}" for store, p in PEOPLE]


@pytest.mark.parametrize("store", list(STORES))
def test_every_json_object_parses_and_every_object_is_text(store: str) -> None:
    stored = objects(store)
    parsed = 0
    for name, content in stored.items():
        text = content.decode("utf-8")
        if name.endswith("/search.json"):
            assert search_header(text)["version"] == 3, name
        elif name.endswith(".json"):
            json.loads(text)
        parsed += name.endswith(".json")
    # Each store holds records, indexes, settings and undo records: far more than a few.
    assert parsed >= (20 if store == "store" else 8), sorted(stored)


@pytest.mark.parametrize(("store", "person"), PEOPLE, ids=PEOPLE_IDS)
def test_each_person_s_preferences_notes_and_settings_are_kept(
    store: str, person: dict[str, Any]
) -> None:
    user = person["user"]
    if person["preferences"]:
        stored = json.loads(read(store, f"users/{user}/preferences.json"))
        learned = stored.pop("_learned")
        assert stored == person["preferences"]
        assert set(learned) == set(person["preferences"])
        for entry in learned.values():
            assert entry["channel"] == person["dm"]
            assert entry["thread"] in [c["thread_ts"] for c in person["conversations"]]
    for note in person["notes"]:
        assert note["memory_path"] == f"/memories/{note['key']}"
        assert note["contains"] in read(store, note["key"])
    if person.get("memory_notes_shown") is False:
        assert json.loads(read(store, f"settings/{user}.json")) == {"memory_notes": False}
    else:
        assert not (DATA / store / key(store, f"settings/{user}.json")).exists()


@pytest.mark.parametrize(("store", "person"), PEOPLE, ids=PEOPLE_IDS)
def test_each_person_s_conversations_are_recorded_summarised_and_indexed(
    store: str, person: dict[str, Any]
) -> None:
    user, dm = person["user"], person["dm"]
    conversations = person["conversations"]
    if conversations:
        index = json.loads(read(store, f"people/{user}/conversations.json"))
        assert [(e["thread"], e["title"], e["channel"]) for e in index] == [
            (c["thread_ts"], c["title"], dm) for c in reversed(conversations)
        ]
        search = search_header(read(store, f"people/{user}/search.json"))
        assert sorted(search["threads"].split()) == sorted(c["thread_ts"] for c in conversations)
        assert sorted(search["titles"]) == sorted(c["title"] for c in conversations)
        welcome = json.loads(read(store, f"people/{user}/welcome.json"))
        assert (welcome["thread"], welcome["greeting"]) == (
            person["welcome_thread"],
            person["greeting"],
        )
    for talk in conversations:
        thread = talk["thread_ts"]
        record = json.loads(read(store, f"conversations/{dashed(thread)}.json"))
        assert record["thread"] == thread
        assert (record["owner"]["kind"], record["owner"]["user"]) == ("person", user)
        assert record["owner"]["channel"] == dm
        assert len(record["messages"]) == talk["messages"]
        said = [m["text"] for m in record["messages"] if m["role"] == "user"]
        assert any(talk["detail"] in text for text in said), said
        summary = read(store, f"sessions/{dashed(thread)}/context.md")
        assert summary.startswith(f"# {talk['title']}\n")
        assert f"User: {user}" in summary
        assert read(store, f"people/{user}/threads/{dashed(thread)}") == ""
        json.loads(read(store, f"threads/{dm}/{dashed(thread)}.json"))


@pytest.mark.parametrize(("store", "person"), PEOPLE, ids=PEOPLE_IDS)
def test_each_person_s_undo_records_and_channel_markers_are_theirs(
    store: str, person: dict[str, Any]
) -> None:
    user = person["user"]
    stored = objects(store)
    undo_markers = sorted(
        name.rsplit("/", 1)[1]
        for name in stored
        if name.startswith(key(store, f"people/{user}/undo/"))
    )
    assert undo_markers == person["undo_records"]
    for undo_id in person["undo_records"]:
        record = json.loads(read(store, f"undo/{undo_id}.json"))
        assert record["owner"] == user
        assert all(c["key"].startswith(f"users/{user}/") for c in record["changes"])
    said = sorted(
        name.rsplit("/", 1)[1].replace("-", ".")
        for name in stored
        if name.startswith(key(store, f"people/{user}/said/"))
    )
    assert said == sorted(person["channel_threads_spoken_in"])


def test_sam_s_first_answer_saved_his_name_and_travel_note_with_an_undo() -> None:
    [sam] = [p for p in STORES["store"]["people"] if p["user"] == "U0LEGACY1"]
    records = [json.loads(read("store", f"undo/{u}.json")) for u in sam["undo_records"]]
    changed = {c["key"] for r in records for c in r["changes"]}
    assert changed == {"users/U0LEGACY1/preferences.json", "users/U0LEGACY1/notes/travel.md"}
    assert any("Saved to memory: notes/travel.md" in r["lines"] for r in records)


def test_the_erased_person_has_a_tombstone_and_nothing_from_before_it() -> None:
    [robin] = [p for p in STORES["store"]["people"] if p["erased_at"] is not None]
    user, erased_at = robin["user"], when(robin["erased_at"])
    tombstone = json.loads(read("store", robin["tombstone_key"]))
    assert when(tombstone["erased_at"]) == erased_at
    assert user not in robin["tombstone_key"], "a tombstone names nobody"

    stored = objects("store")
    for forgotten in robin["forgotten_conversations"]:
        gone = dashed(forgotten["thread_ts"])
        assert [name for name in stored if gone in name] == []
        for word in forgotten["words_gone_everywhere"]:
            holding = [n for n, c in stored.items() if word.lower() in c.decode().lower()]
            assert holding == [], f"{word!r} is still in {holding}"
    # What is kept of them was learned after they asked to be forgotten.
    learned = json.loads(read("store", f"users/{user}/preferences.json"))["_learned"]
    assert all(when(entry["at"]) >= erased_at.replace(microsecond=0) for entry in learned.values())
    for talk in robin["conversations"]:
        record = json.loads(read("store", f"conversations/{dashed(talk['thread_ts'])}.json"))
        assert when(record["started"]) >= erased_at.replace(microsecond=0)


def test_the_channel_s_memory_summary_index_changes_and_markers_are_kept() -> None:
    [channel] = STORES["store"]["channels"]
    cid = channel["channel"]
    for memory in channel["memory"]:
        assert memory["memory_path"] == f"/memories/{memory['key']}"
        content = read("store", memory["key"])
        assert all(line in content for line in memory["contains"])
    changes = json.loads(read("store", f"channel-records/{cid}/changes.json"))["changes"]
    assert [c["by"] for c in changes] == channel["changes_by"]
    public = json.loads(read("store", "channel-records/public.json"))["channels"]
    assert [entry[0] for entry in public] == [cid]
    search = search_header(read("store", f"channel-records/{cid}/search.json"))
    assert search["threads"].split() == [t["thread_ts"] for t in channel["threads"]]
    for thread in channel["threads"]:
        name = dashed(thread["thread_ts"])
        assert read("store", f"channel-records/{cid}/threads/{name}.md").startswith(
            f"# {thread['title']}\n"
        )
        assert read("store", f"channel-records/{cid}/conversations/{name}") == ""
        record = json.loads(read("store", f"conversations/{name}.json"))
        assert (record["owner"]["kind"], record["owner"]["channel"]) == ("channel", cid)
        assert record["owner"]["user"] == thread["started_by"]
        assert len(record["messages"]) == thread["messages"]
        authors = {m["user"] for m in record["messages"] if m["role"] == "user"}
        assert authors == set(thread["authors"])
        assert any(
            m.get("user") == thread["said_by"] and thread["detail"] in m["text"]
            for m in record["messages"]
        )
        for author in thread["authors"]:
            assert read("store", f"people/{author}/said/{name}") == ""


def test_the_distribution_store_is_scoped_by_team_and_keeps_no_token() -> None:
    spec = STORES["store_distribution"]
    stored = objects("store_distribution")
    for left_out in spec["left_out"]:
        assert left_out not in stored
    team_keys = [name for name in stored if not name.startswith(DEPLOYMENT_WIDE)]
    assert team_keys and all(
        name.split("/", 1)[1].startswith(spec["team_scope"]) for name in team_keys
    )
    installation = json.loads(
        read("store_distribution", "installations/-/TLEGACY1/installation.json")
    )
    assert installation["team_id"] == spec["slack_team"]
    assert "bot_token" not in installation


@pytest.mark.parametrize("store", list(STORES))
def test_no_object_holds_a_secret_shaped_string(store: str) -> None:
    for name, content in objects(store).items():
        text = content.decode("utf-8")
        assert redact_secret_shapes(text) == text, f"{name} holds something shaped like a secret"


def test_the_legacy_data_stays_small() -> None:
    total = sum(p.stat().st_size for p in DATA.rglob("*") if p.is_file())
    assert total < 200_000, f"{total} bytes"


def test_the_readme_lists_every_key_of_both_stores() -> None:
    readme = (DATA / "README.md").read_text()
    for store in STORES:
        missing = [name for name in objects(store) if f"`{name}`" not in readme]
        assert missing == [], f"the README does not list {missing}"
