"""Orion's Slack edge: Bolt listeners, grouped by concern in rooms (the experiences,
`conversation/`, `home/`, `channel_view/`, `catch_all`, `oauth/`) and wired by `app.py`
(docs/architecture.md, "Rooms inside app/slack"; tests/test_layering.py keeps them apart)."""
