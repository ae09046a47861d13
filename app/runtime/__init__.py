"""Process plumbing the entry points share, below every layer (docs/architecture.md,
"Composition and runtime"): `slack_intake`, `port`, `stop_signals`, `in_flight`/`background`
(which graceful shutdown waits for), and `waiting`: who still waits for a greeting or an
answer, whom background work lets go first. Imports nothing of Orion's above app/observability."""
