"""What a turn teaches Orion, and what a person can take back (docs/architecture.md, "Layers")."""
