"""Every key prefix in Orion's store (a bucket, or the same paths under `MEMORY_DIR`): what
lives under it, who can reach it and how long it stays. The one list: the key builders
(scopes.py), retention (retention.py), the retry claims, erasure, the bucket's lifecycle
rule (gcs-lifecycle.json, held against this list by tests/test_memory_hygiene.py) and the
docs take their prefixes from here, so a new kind of object starts here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Lifetime(StrEnum):
    KEPT = "kept"  # until a person forgets it (their own objects) or an operator deletes it
    CONVERSATION = "retention window"  # deleted MEMORY_SESSION_RETENTION_DAYS after its last write
    DAY = "one day"  # deleted by the bucket's lifecycle rule after a day


@dataclass(frozen=True)
class KeyPrefix:
    prefix: str
    holds: str  # one line: what lives under it
    lifetime: Lifetime
    # Claude's memory tool reaches it (`/memories/{key}`, within one conversation's scope).
    # Everything else is Orion's own: nothing a person or Claude writes decides it.
    model_reaches: bool
    # It holds a person's content, found from their id: "Forget everything" deletes it.
    personal: bool
    # Distribution mode: the same for every workspace, never under a team's keys
    # (app/storage/team_scope.py). Every other prefix is scoped by team there.
    deployment_wide: bool = False


GLOBAL = KeyPrefix(
    "global/",
    "organisation-wide context (context.md), loaded for everyone; written by an operator",
    Lifetime.KEPT,
    model_reaches=True,  # read-only
    personal=False,
)
USERS = KeyPrefix(
    "users/",
    "each person's directory: preferences.json and the notes Claude keeps about them",
    Lifetime.KEPT,
    model_reaches=True,
    personal=True,
)
SESSIONS = KeyPrefix(
    "sessions/",
    "each thread's summary (context.md) and the notes Claude keeps for it",
    Lifetime.CONVERSATION,
    model_reaches=True,
    personal=True,
)
THREADS = KeyPrefix(
    "threads/",
    "each thread's saved context, by channel, with a copy of the memory restored there",
    Lifetime.CONVERSATION,
    model_reaches=False,
    personal=True,
)
PEOPLE = KeyPrefix(
    "people/",
    "Orion's records about each person: their conversations (the index, and under "
    "threads/ one empty marker per conversation record of theirs) and the search index "
    "over them, welcome back, where each preference was learned",
    Lifetime.CONVERSATION,
    model_reaches=False,
    personal=True,
)
CONVERSATIONS = KeyPrefix(
    "conversations/",
    "each conversation's record, by thread: who opened it (team, enterprise, channel, "
    "person) and its transcript (what the person wrote and Orion answered, redacted and "
    "bounded)",
    Lifetime.CONVERSATION,
    model_reaches=False,
    personal=True,
)
UNDO = KeyPrefix(
    "undo/",
    "undo records: what one answer changed in a person's memory, with each file as it was "
    "before, under a random id (its owner is inside, and listed under people/{id}/undo/)",
    Lifetime.CONVERSATION,
    model_reaches=False,
    personal=True,
)
SETTINGS = KeyPrefix(
    "settings/",
    "each person's choices about how Orion behaves with them (e.g. the memory notes "
    "under answers), one file per person",
    Lifetime.KEPT,
    model_reaches=False,
    personal=True,
)
CHANNELS = KeyPrefix(
    "channels/",
    "each channel's memory: the notes Claude keeps for a channel it is mentioned in "
    "(decisions, conventions, who owns what), by channel id; only that channel's "
    "conversations reach it, and its members see and forget it (/orion memory)",
    Lifetime.KEPT,
    model_reaches=True,
    personal=False,
)
CHANNEL_RECORDS = KeyPrefix(
    "channel-records/",
    "Orion's records about each channel, by channel id: its thread summaries, its search "
    "index, one empty marker per conversation record of its threads, who changed its "
    "memory (changes.json) and, while it is archived, its memory (archived/); and the "
    "workspace's public channels with an index (public.json)",
    Lifetime.CONVERSATION,
    model_reaches=False,
    personal=False,
)
CHANNEL_SETTINGS = KeyPrefix(
    "channel-settings/",
    "what a workspace admin chose for channels: the workspace's choice (workspace.json) "
    "and each channel's ({channel}.json), with who chose it; and since when each channel "
    "is as Orion last heard ({channel}.state.json); no one's content",
    Lifetime.KEPT,
    model_reaches=False,
    personal=False,
)
EVENTS = KeyPrefix(
    "events/",
    "claims of handled Slack events (retry dedupe) and of once-a-day prompts; no one's id",
    Lifetime.DAY,
    model_reaches=False,
    personal=False,
)
ERASURES = KeyPrefix(
    "erasures/",
    "tombstones: when a person asked to be forgotten (or Orion was removed from a channel), "
    "under a hash of their id",
    Lifetime.KEPT,
    model_reaches=False,
    personal=False,
)

# Distribution mode only (one deployment, many workspaces): Orion's records of the
# deployment itself, reached only by the installation flow and uninstall, never by a
# workspace's events or the memory tool (app/storage/team_scope.py refuses them).
INSTALLATIONS = KeyPrefix(
    "installations/",
    "each workspace's installation: its bot token (and refresh token) — the only place "
    "tokens are kept",
    Lifetime.KEPT,
    model_reaches=False,
    personal=False,
    deployment_wide=True,
)
OAUTH_STATES = KeyPrefix(
    "oauth-states/",
    "the spent mark of each install state Slack's redirect brought back (signed, not stored)",
    Lifetime.DAY,
    model_reaches=False,
    personal=False,
    deployment_wide=True,
)
UNINSTALLS = KeyPrefix(
    "uninstalls/",
    "tombstones: when a workspace uninstalled Orion, by its team (and enterprise) id; "
    "under pending/, the uninstalls whose erasure's second pass is still to run",
    Lifetime.KEPT,
    model_reaches=False,
    personal=False,
    deployment_wide=True,
)

KEY_PREFIXES = (
    GLOBAL,
    USERS,
    SESSIONS,
    THREADS,
    PEOPLE,
    CONVERSATIONS,
    UNDO,
    SETTINGS,
    CHANNELS,
    CHANNEL_RECORDS,
    CHANNEL_SETTINGS,
    EVENTS,
    ERASURES,
    INSTALLATIONS,
    OAUTH_STATES,
    UNINSTALLS,
)
TEAM_SCOPED_PREFIXES = tuple(kind.prefix for kind in KEY_PREFIXES if not kind.deployment_wide)

GLOBAL_PREFIX = GLOBAL.prefix
USERS_PREFIX = USERS.prefix
SESSIONS_PREFIX = SESSIONS.prefix
THREADS_PREFIX = THREADS.prefix
PEOPLE_PREFIX = PEOPLE.prefix
CONVERSATIONS_PREFIX = CONVERSATIONS.prefix
UNDO_PREFIX = UNDO.prefix
SETTINGS_PREFIX = SETTINGS.prefix
CHANNELS_PREFIX = CHANNELS.prefix
CHANNEL_RECORDS_PREFIX = CHANNEL_RECORDS.prefix
CHANNEL_SETTINGS_PREFIX = CHANNEL_SETTINGS.prefix
EVENTS_PREFIX = EVENTS.prefix
ERASURES_PREFIX = ERASURES.prefix
INSTALLATIONS_PREFIX = INSTALLATIONS.prefix
OAUTH_STATES_PREFIX = OAUTH_STATES.prefix
UNINSTALLS_PREFIX = UNINSTALLS.prefix
