"""Every top-level prefix of Orion's store, whose objects live under it and how long they stay: the
one list keys, retention, erasure, the lifecycle rule and the docs take their prefixes from."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Lifetime(StrEnum):
    KEPT = "kept"  # until its owner forgets it, or an operator deletes it
    # An owner's home: kept, but its conversations expire MEMORY_SESSION_RETENTION_DAYS
    # after their last write (homes.py says which keys).
    HOME = "kept; conversations expire with the retention window"
    DAY = "one day"  # deleted by the bucket's lifecycle rule after a day


# The memory tool reaches parts of global/ (read-only), people/ and channels/ within one
# conversation's scope (app/memory/tool/model_paths.py); everything else is Orion's own.
@dataclass(frozen=True)
class KeyPrefix:
    prefix: str
    holds: str  # one line: what lives under it
    lifetime: Lifetime
    # Distribution mode: the same for every workspace, never under a team's keys
    # (app/storage/team_scope.py). Every other prefix is scoped by team there.
    deployment_wide: bool = False


GLOBAL = KeyPrefix(
    "global/",
    "organisation-wide context (context.md), loaded for everyone; written by an operator",
    Lifetime.KEPT,
)
PEOPLE = KeyPrefix(
    "people/",
    "each person's home: their profile, memory (preferences and notes), conversations, "
    "search index and undo records",
    Lifetime.HOME,
)
CHANNELS = KeyPrefix(
    "channels/",
    "each channel's home, the same as a person's: profile (admins' choice, who changed "
    "what), memory, conversations, search index, and its memory while archived",
    Lifetime.HOME,
)
WORKSPACE = KeyPrefix(
    "workspace/",
    "the workspace's own: what admins chose for every channel, and the public channels "
    "with a search index (channels.json); no one's content",
    Lifetime.KEPT,
)
EVENTS = KeyPrefix(
    "events/",
    "claims of handled Slack events (retry dedupe) and of once-a-day prompts; no one's id",
    Lifetime.DAY,
)

# Distribution mode only (one deployment, many workspaces): Orion's records of the
# deployment itself, reached only by the installation flow and uninstall, never by a
# workspace's events or the memory tool (app/storage/team_scope.py refuses them).
INSTALLATIONS = KeyPrefix(
    "installations/",
    "each workspace's installation: its bot token (and refresh token) — the only place "
    "tokens are kept",
    Lifetime.KEPT,
    deployment_wide=True,
)
OAUTH_STATES = KeyPrefix(
    "oauth-states/",
    "the spent mark of each install state Slack's redirect brought back (signed, not stored)",
    Lifetime.DAY,
    deployment_wide=True,
)
UNINSTALLS = KeyPrefix(
    "uninstalls/",
    "tombstones: when a workspace uninstalled Orion, by its team (and enterprise) id; "
    "under pending/, the uninstalls whose erasure's second pass is still to run",
    Lifetime.KEPT,
    deployment_wide=True,
)

DEPLOYMENT = KeyPrefix(
    "deployment/",
    "the deployment's own: when its store was first upgraded from the layout of 2026-11-28 "
    "(layout.json: older files in a channel's home were its memory)",
    Lifetime.KEPT,
    deployment_wide=True,
)

KEY_PREFIXES = (
    *(GLOBAL, PEOPLE, CHANNELS, WORKSPACE, EVENTS),
    *(INSTALLATIONS, OAUTH_STATES, UNINSTALLS, DEPLOYMENT),
)
TEAM_SCOPED_PREFIXES = tuple(kind.prefix for kind in KEY_PREFIXES if not kind.deployment_wide)

# What Orion wrote up to 2026-11-28 (one prefix per kind of object, a person's scattered
# over ten): read by the upgrade (app/learning/upgrade.py: every start, and `orion
# migrate`), which moves it home, and erased with an uninstalled workspace (team_keys.py).
LEGACY_PREFIXES = (
    *("users/", "sessions/", "threads/", "conversations/", "undo/", "settings/"),
    *("channel-records/", "channel-settings/", "erasures/"),
)
