"""What a turn learns never keeps a secret: summaries, welcomes, the profile's list of
conversations, the search index and preferences all land in the store with `[redacted]`
where the person wrote a token.

Written through the store as Orion composes it (app/services.py `build_storage`), on both
backends; the objects are read raw, around Orion.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

from app.agent.history import ThreadMessage
from app.learning.guard import Guard
from app.learning.preferences import Preference, save_preferences
from app.learning.profile import Profile
from app.learning.session_summary import learn_from_turn
from app.learning.summary_file import Summary, SummaryDraft
from app.learning.transcript import Utterance
from app.learning.welcome import welcome_of
from app.memory.homes import person, preferences_key
from tests.backends import THREAD, USER, Backend

SLACK_TOKEN = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
NOW = datetime.now(UTC)  # within the retention window of the store as kept


class Summarizer:
    """A model that repeats the token everywhere it can."""

    async def __call__(
        self, previous: Summary | None, new_messages: Sequence[Utterance]
    ) -> SummaryDraft:
        return SummaryDraft(
            title=f"Rotating {SLACK_TOKEN}",
            body=f"The person shared the bot token {SLACK_TOKEN} and password: hunter2.",
            welcome=f"Welcome back! Did {SLACK_TOKEN} get rotated?",
            next_step="Rotate the token",
        )


async def test_a_summary_with_a_slack_token_is_stored_redacted(backend: Backend) -> None:
    history = [
        ThreadMessage("user", f"Our bot token {SLACK_TOKEN} leaked, password: hunter2. Help?"),
        ThreadMessage("assistant", "Revoke it in the app settings, then rotate the password."),
    ]
    store, home = backend.kept(), person(USER)
    outcome = await learn_from_turn(
        await Guard.reading(store, home),
        thread_ts=THREAD,
        channel="D0123ABCD",
        history=history,
        previous=None,
        summarize=Summarizer(),
        now=NOW,
    )

    assert outcome.written
    raw = {key: backend.raw_read(key) or "" for key in (home.profile_key, home.search_key)}
    for key, content in raw.items():
        assert SLACK_TOKEN not in content and "hunter2" not in content, key
        assert "[redacted]" in content, key
    profile = Profile.parse(raw[home.profile_key])
    welcome = welcome_of(profile)
    assert welcome is not None and welcome.summary is not None
    assert welcome.summary.title == "Rotating [redacted]"
    assert welcome.summary.body == (
        "The person shared the bot token [redacted] and password: [redacted]."
    )
    assert welcome.greeting == "Welcome back! Did [redacted] get rotated?"
    assert [e.title for e in profile.conversations] == ["Rotating [redacted]"]


async def test_a_preference_with_a_slack_token_is_stored_redacted(backend: Backend) -> None:
    found = [Preference("name", SLACK_TOKEN), Preference("team", "payments")]
    assert await save_preferences(backend.kept(), USER, found, now=NOW)

    stored = json.loads(backend.raw_read(preferences_key(USER)) or "")
    assert stored["name"] == "[redacted]" and stored["team"] == "payments"
    assert SLACK_TOKEN not in (backend.raw_read(preferences_key(USER)) or "")


async def test_preferences_without_secrets_are_stored_as_written(backend: Backend) -> None:
    found = [Preference("response_style", "short answers; the password reset flow first")]
    await save_preferences(backend.kept(), USER, found, now=NOW)
    plain = backend.raw_read(preferences_key(USER))

    other = backend.store  # the same backend, without the scrubbing layers
    await other.delete(preferences_key(USER))
    await save_preferences(other, USER, found, now=NOW)
    assert backend.raw_read(preferences_key(USER)) == plain
