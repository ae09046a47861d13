"""What Orion does in a channel, as the deployment allows it (`SLACK_CHANNELS`) and a workspace's
admins choose it (app/learning/channel_memory.py). Import-light: the configuration reads it."""

from __future__ import annotations

from enum import StrEnum


class ChannelMode(StrEnum):
    OFF = "off"  # Orion does not answer in the channel
    ANSWERS = "answers"  # it answers when mentioned, and keeps nothing of the channel
    MEMORY = "memory"  # it answers, and remembers for the channel

    def at_most(self, ceiling: ChannelMode) -> ChannelMode:
        order = list(ChannelMode)
        return order[min(order.index(self), order.index(ceiling))]
