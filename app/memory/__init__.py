"""Orion's long-term memory: where memories are stored and how Claude reaches them.

- `store`: the storage interface (`MemoryStore`) and optimistic `update`;
  `gcs_store` / `local_store` implement it, `factory.open_memory_store` picks one.
- `paths`: the memory layout's keys, `/memories/...` path validation, `MemoryScope`.
- `tool`: `ScopedMemoryTool`, Claude's memory tool confined to one conversation.

Importing this package stays cheap (no google-cloud-storage, no anthropic): Orion must
acknowledge Slack's first event within 3 seconds of starting.
"""
