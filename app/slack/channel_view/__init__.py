"""Orion in channels (docs/channels.md): a mention, the channel's lifecycle, and `/orion`; the
answering core is app/slack/conversation/."""
