"""Orion's Slack edge: Bolt listeners, grouped by concern.

- `app.py` builds the Bolt app and registers the listeners of the configured experience;
  `event_scope`, `web_client` and `installed_team` are what every listener runs with.
- `assistant_view/`: the Assistant messaging experience (threads in the side pane).
- `agent_view/`: the Agent messaging experience (conversations in the Messages tab).
- `conversation/`: what both experiences share to answer a message: the retry claim, the
  memory kept with a thread, the streamed reply, how Orion shows it is working, the
  greeting and the feedback buttons.
- `home/`: the Home tab and its memory controls (Forget, Forget everything, Download).
- `catch_all`: events no listener above wants, acknowledged so Slack does not retry them.

The experiences and home/ use conversation/ and the modules above, never each other
(tests/test_layering.py).
"""
