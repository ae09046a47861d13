"""What a channel's life (removed, deleted, archived, shared, added) does to what Orion keeps for
it, an event late or again undoing nothing newer (docs/channels.md, "A channel's life")."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext

from app.learning.channel_memory import (
    archive_channel,
    channel_state_since,
    erase_channel,
    note_channel_state_since,
)
from app.memory.scopes import is_shared_channel_id
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.event_scope import handling
from app.storage.store import ObjectStore

log = get_logger(__name__)

# Erasing a channel is not on anyone's path, and must finish: many deletions.
LIFECYCLE_BUDGET_S = 60.0

LEFT = ("channel_left", "group_left")
DELETED = ("channel_deleted", "group_deleted")
ARCHIVED = ("channel_archive", "group_archive")
UNARCHIVED = ("channel_unarchive", "group_unarchive")
SHARING = ("channel_shared", "channel_unshared")

Work = Callable[[ObjectStore, str], Awaitable[Any]]
Listener = Callable[[dict[str, Any], dict[str, Any]], Awaitable[None]]


def register(app: AsyncApp, provider: ServiceProvider) -> None:
    async def run(
        body: dict[str, Any], event: dict[str, Any], work: Work, *, changes_state: bool = True
    ) -> None:
        channel = event.get("channel")
        kind = str(event.get("type"))
        async with handling(f"slack.{kind}", body):
            if not is_shared_channel_id(channel):
                log.info("slack.channel.lifecycle_ignored", reason="malformed", slack_event=kind)
                return
            moment = happened_at(body, event) if changes_state else None
            try:
                async with provider.storage_within(LIFECYCLE_BUDGET_S) as storage:
                    store = storage.store
                    since = await channel_state_since(store, str(channel)) if moment else None
                    if moment is not None and since is not None and moment <= since:
                        log.info("slack.channel.lifecycle_stale", slack_event=kind, channel=channel)
                        return
                    outcome = await work(store, str(channel))
                    if moment is not None:
                        await note_channel_state_since(store, str(channel), moment, event=kind)
            except Exception as exc:
                log.error(
                    "slack.channel.lifecycle_failed",
                    slack_event=kind,
                    channel=channel,
                    exc_info=exc,
                )
                return
            log.info("slack.channel.lifecycle", slack_event=kind, channel=channel, objects=outcome)

    erase_left = partial(erase_channel, why="Orion left the channel")

    async def noted(store: ObjectStore, channel: str) -> int:
        return 0

    def listener(work: Work, *, changes_state: bool = True) -> Listener:
        async def on_event(body: dict[str, Any], event: dict[str, Any]) -> None:
            await run(body, event, work, changes_state=changes_state)

        return on_event

    works: dict[tuple[str, ...], Work] = {
        LEFT: erase_left,
        DELETED: partial(erase_channel, why="the channel was deleted"),
        ARCHIVED: archive_channel,
        UNARCHIVED: partial(archive_channel, back=True),
    }
    for kinds, work in works.items():
        for kind in kinds:
            app.event(kind)(listener(work))
    for kind in SHARING:
        app.event(kind)(listener(noted, changes_state=False))

    async def is_orion(event: dict[str, Any], context: AsyncBoltContext) -> bool:
        return event.get("user") is not None and event.get("user") == context.bot_user_id

    @app.event("member_left_channel", matchers=[is_orion])
    async def on_orion_removed(body: dict[str, Any], event: dict[str, Any]) -> None:
        await run(body, event, erase_left)

    @app.event("member_joined_channel", matchers=[is_orion])
    async def on_orion_added(body: dict[str, Any], event: dict[str, Any]) -> None:
        await run(body, event, noted)

    # Someone else joined or left: nothing of Orion's changes (a member's messages stay the
    # channel's, as Slack keeps them; what they asked Orion to forget is theirs to ask).
    for kind in ("member_joined_channel", "member_left_channel"):
        app.event(kind)(partial(_someone_else, f"slack.{kind}"))


async def _someone_else(name: str, body: dict[str, Any]) -> None:
    async with handling(name, body):
        pass


def happened_at(body: dict[str, Any], event: dict[str, Any]) -> datetime | None:
    """When Slack says the event happened: the event's `event_ts` (to the microsecond),
    else the envelope's `event_time` (whole seconds); None when it says neither."""
    for value in (event.get("event_ts"), body.get("event_time")):
        try:
            seconds = float(value) if isinstance(value, str | int | float) else None
            if seconds is not None and not isinstance(value, bool) and seconds > 0:
                return datetime.fromtimestamp(seconds, UTC)
        except (OverflowError, OSError, ValueError):
            continue
    return None
