"""Forget everything: from the person's click to the last of their objects gone.

Orion runs in-process over HTTP (as in the end-to-end tests) against the fake Slack, with
memories in the GCS emulator. Each sample seeds a fresh bucket with one person holding
200 objects in their home — their profile (listing their conversations), preferences,
78 notes, and 60 conversations, each its object (transcript, summary, Slack's context)
and a note of its own — beside another person's, opens the person's Home tab, and posts
the signed "Forget everything" click (what Slack sends once the person confirmed). Timed
from posting the click to:

- the last of the 199 objects gone (the bucket listed every few milliseconds; the
  profile stays, holding only when the erasure was);
- the emptied Home tab published (what the person sees).

Loopback hides network latency: in Cloud Run each deletion is a GCS round trip, run 16 at
a time (app/learning/erasure.py). Run alone with `uv run python -m bench.memory_erasure
[--quick]`.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from app.memory import homes
from app.slack.home.memory_view import ACTION_FORGET_EVERYTHING
from bench.environment import benchmark_environment
from bench.stats import median_ms, print_table
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.layout import conversation, profile
from tests.orion_server import OrionServer, make_settings

USER, DM = "U0BENCH03", "D0BENCH03"
OTHER, OTHER_DM = "U0BENCH04", "D0BENCH04"
OBJECTS = 200
CONVERSATIONS = 60
NOTES = OBJECTS - 2 - 2 * CONVERSATIONS  # besides the profile and preferences.json
POLL_S = 0.005
TIMEOUT_S = 120.0


def person(user: str, dm: str, conversations: int, notes: int, base: int) -> dict[str, str]:
    """One person's objects, all in their home: profile, preferences, notes, and per
    conversation its object and a note of its own."""
    now = datetime.now(UTC).replace(microsecond=0)
    home = homes.person(user)
    threads = [f"{base + n}.000100" for n in range(conversations)]
    listed = [(ts, f"Topic {n}") for n, ts in enumerate(threads)]
    objects = {
        home.profile_key: profile(conversations=listed, channel_id=dm, at=now),
        homes.preferences_key(user): json.dumps({"name": user, "language": "French"}),
    }
    for n in range(notes):
        objects[f"{home.memory_prefix}notes/note-{n:03}.md"] = f"Note {n} about {user}.\n" * 20
    for n, ts in enumerate(threads):
        said = [("user", f"{user} asks about topic {n}."), ("assistant", f"Topic {n}, then.")]
        objects[home.conversation_key(ts)] = conversation(
            user,
            ts,
            channel_id=dm,
            title=f"Topic {n}",
            summary=f"{user} talked about topic {n}.",
            messages=said,
            at=now,
        )
        objects[f"{home.notes_prefix(ts)}plan.md"] = f"The plan for topic {n}.\n"
    return objects


def _seed(emulator: GcsEmulator, bucket: str) -> set[str]:
    mine = person(USER, DM, CONVERSATIONS, NOTES, 1_714_000_000)
    assert len(mine) == OBJECTS
    theirs = person(OTHER, OTHER_DM, 5, 5, 1_715_000_000)
    for key, content in {**mine, **theirs}.items():
        emulator.write(bucket, key, content)
    return set(mine) - {homes.person(USER).profile_key}  # the profile stays, as the mark


def _wait(predicate: Callable[[], object], what: str) -> float:
    """Seconds on the monotonic clock when `predicate()` first held."""
    deadline = time.monotonic() + TIMEOUT_S
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(POLL_S)
    return time.monotonic()


def _one_run(
    emulator: GcsEmulator, slack: FakeSlack, claude: FakeClaude
) -> tuple[float, float, float]:
    bucket = f"orion-bench-{uuid.uuid4().hex[:12]}"
    emulator.create_bucket(bucket)
    keys = _seed(emulator, bucket)
    settings = make_settings(slack, claude, gcs_memories_bucket=bucket)
    with OrionServer(settings) as orion:
        orion.post_event(events.app_home_opened(USER, DM, tab="home"))
        _wait(lambda: slack.home_view(USER), "the Home tab")
        view = slack.home_view(USER)
        assert view is not None
        published = len(slack.home_views(USER))
        body = events.form_body(events.view_block_actions(USER, view, ACTION_FORGET_EVERYTHING))

        clicked = time.monotonic()
        assert orion.post_form(body).status_code == 200
        gone = _wait(lambda: not keys & set(emulator.names(bucket)), "the last object gone")
        shown = _wait(lambda: len(slack.home_views(USER)) > published, "the emptied tab")
        [line] = orion.wait_logged("memory.forget")
    assert line["objects"] == OBJECTS - 1, line
    return gone - clicked, shown - clicked, line["duration_ms"] / 1000


def run(quick: bool) -> list[tuple[str, str]]:
    runs = 1 if quick else 5
    gone, shown, logged = [], [], []
    with (
        GcsEmulator() as emulator,
        benchmark_environment(emulator.url),
        FakeSlack() as slack,
        FakeClaude() as claude,
    ):
        for _ in range(runs):
            slack.reset()
            g, s, d = _one_run(emulator, slack, claude)
            gone.append(g)
            shown.append(s)
            logged.append(d)
    label = f"forget everything, {OBJECTS} objects (GCS emulator), x{runs}"
    return [
        (f"{label}: click → last object gone, median ms", str(median_ms(gone))),
        (f"{label}: click → emptied Home tab shown, median ms", str(median_ms(shown))),
        (f"{label}: erasure as logged (duration_ms), median ms", str(median_ms(logged))),
    ]


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
