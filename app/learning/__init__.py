"""What a turn teaches Orion, and what a person can take back: what an event opens with,
each owner's profile and the one erasure guard, conversations, preferences, summaries,
recall, the welcome, the inventory, erasure and undo, and the upgrade from the earlier
layout (docs/architecture.md, "Layers")."""
