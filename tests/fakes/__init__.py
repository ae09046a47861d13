"""Loopback protocol peers that the real SDK clients talk to in tests (docs/testing.md).

- slack_api.FakeSlack — Slack Web API (+ workspace model in slack_model)
- socket_mode.FakeSocketModeServer — Slack Socket Mode WebSocket endpoint
- slack_events — Events API / interactivity payload builders and request signing
- anthropic_api.FakeClaude — Anthropic Messages API, JSON and SSE (script items in claude_script)
- gcs.GcsEmulator — fake-gcs-server binary; fault_proxy.FaultyProxy — delays and 5xx in front of it

Each HTTP/WebSocket fake serves from its own event loop in a daemon thread, so it works from
sync tests, async tests, subprocess-based tests and benchmark scripts alike.
"""
