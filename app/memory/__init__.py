"""The memory model: each owner's home and its keys, the memory tool's paths, loading within
a budget, formatting for the prompt, retention, redaction on every write, and Claude's
memory tool (`tool/`). Built on `app.storage`; what a turn teaches is `app.learning`
(docs/architecture.md, "Layers")."""
