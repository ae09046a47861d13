"""Claude's memory tool (`memory_20250818`), confined to one conversation's memory: `scoped_tool`
parses, traces, dispatches and views; the writes (`editing`, `moving`) run within the
conversation's `access`; `rendering` writes results as the SDK's reference does; `errors` are
results for the model."""
