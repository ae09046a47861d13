"""Orion in channels: answering a mention in a channel thread (the answering core is
app/slack/conversation/, which decides with channel_turns.py whether and how), the
channel's lifecycle (Orion removed, the channel deleted, archived, shared), and `/orion`:
a channel's memory for its members, and what admins choose for channels."""
