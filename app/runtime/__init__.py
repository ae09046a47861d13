"""Process tuning: the acknowledgement comes first, the heap stays quiet.

What each part trades, and the benchmark that measures it (`uv run python -m bench.run`):

- `early_ack`: acknowledges a signed Slack event before Bolt (and the SDKs) have loaded,
  trading a second signature check for an ack a fresh instance can give within Slack's
  3 seconds — "cold start: first ack / full-stack import".
- `ack_first`: holds acknowledged events' handling until a burst's acks are out (a few
  milliseconds at most), trading that much answer latency for ack latency under load —
  "ack latency, 100 concurrent events".
- `heap`: freezes the long-lived heap and collects the young generation less often,
  trading a little resident memory for no GC pauses in a burst — the same ack figures and
  "Orion process CPU per turn".
- `people_first`: work nobody watches (saving a thread's context, a turn's summary) waits
  until nobody on the instance waits for a greeting or for Claude (at most 3 s), trading
  that delay for greetings and answers that do not queue behind it — "burst: Orion, 80
  people at once".
- intake (`slack_signature`, `capped_body`, `slack_payload`): a request from the internet
  costs at most the body cap (1 MiB) of memory and one HMAC before it is known to be
  Slack's; nothing parses it before — "intake: memory growth under 10 concurrent 30 MiB
  unsigned requests" and their time to refusal.

And one process per vCPU (`HTTP_WORKERS`, app/http_workers.py), trading a slower cold
start and a second copy of the clients for twice the CPU in a burst — "burst: Orion, 2
workers" beside "Orion, 1 worker", and "cold start, 2 workers": `worker_siblings` lets a
worker pass a Stop to the worker running that turn and tells /readyz whether every worker
is ready, and `worker_watchdog` ends a worker whose loop is wedged or whose supervisor is
gone, and stops it as one process stops.

Stopping is bounded: `stop_signals` stops gracefully on the first Ctrl-C or SIGTERM, at
once on a second, and in any case within a deadline (tests/runtime/test_stop_signals.py).

And start-up that heals and says how it is doing: `retrying_build` retries the store and
services builds with back-off (an instance never stays broken by one failed start), and
`slack_auth` checks the bot token once; app/readiness.py reports both on `/readyz`.

And what the process is still doing: `in_flight` counts running listeners and the work
they left running (`background`), which graceful shutdown waits for (app/shutdown.py).

Runtime imports nothing of Orion's above app/observability: the layers and the entry
points use it, never the other way round.
"""
