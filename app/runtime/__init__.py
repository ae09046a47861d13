"""Process plumbing the entry points share, below every layer (docs/architecture.md, "Composition
and runtime"): `slack_intake`, `port`, `stop_signals`, and `in_flight`/`background`, which graceful
shutdown waits for. Imports nothing of Orion's above app/observability."""
