"""The memory model: what Orion remembers and how Claude reaches it.

- `key_prefixes`: every key prefix in the store, what it holds and how long it stays.
- `scopes`: the memory layout's keys, `/memories/...` path validation, `MemoryScope`.
- `loader`, `restore`, `formatting`: reading a person's memories within a budget, and
  writing them into the prompt.
- `preferences_file`: how every reader reads a person's preferences.json (one rule).
- `tool`: `ScopedMemoryTool`, Claude's memory tool confined to one conversation.

Built on `app.storage`; what a turn teaches (preferences, summaries) is `app.learning`.
"""
