"""Process plumbing the entry points share, below every layer (docs/architecture.md,
"Composition and runtime"): intake (`slack_signature`, `capped_body`, `slack_payload`),
`port`, `stop_signals`, and `in_flight`/`background`, which graceful shutdown waits for.
Imports nothing of Orion's above app/observability."""
