"""The memory model: homes and keys, the memory tool's paths and the tool (`tool/`), loading,
formatting, retention, redaction on every write (docs/architecture.md, "Layers")."""
