"""Process plumbing the entry points share, below every layer.

- intake (`slack_signature`, `capped_body`, `slack_payload`): a request from the internet
  costs at most the body cap (1 MiB) of memory and one HMAC before it is known to be
  Slack's; nothing parses it before — "intake: memory growth under 10 concurrent 30 MiB
  unsigned requests" and their time to refusal (`uv run python -m bench.run`).
- `port`: the HTTP port taken before anything is built, so a port in use is said at once.
- `stop_signals`: stopping gracefully on the first Ctrl-C or SIGTERM, at once on a second,
  and in any case within a deadline (tests/runtime/test_stop_signals.py).
- `in_flight` and `background`: what the process is still doing — running listeners and
  the work they left running — which graceful shutdown waits for (app/shutdown.py).

Runtime imports nothing of Orion's above app/observability: the layers and the entry
points use it, never the other way round.
"""
