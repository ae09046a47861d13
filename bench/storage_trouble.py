"""Storage trouble: what a person waits for when the memory store is slow, down, crowded
or not yet connected.

docs/architecture.md says the person's path holds under the worst storage conditions, not just
healthy ones. This benchmark measures that path under each of them, in one run:

1. Slow storage: every storage request (reads, uploads, deletes, listings) takes
   L = 0.5 s. For a returning person (preferences and global context in the bucket):
   `assistant_thread_started` posted → greeting visible, and — in a thread already opened
   and greeted, outside the clock — a message posted → the first request of that turn
   reaching Claude. Both are reported as figures and as multiples of L: one L means
   nothing waits serially in front of the memory reads; each extra L is a storage round
   trip queued before what the person sees.
2. Storage unreachable (connection refused on loopback, bucket configured), warm server:
   the first thread's greeting, a second thread's greeting, then a message in the second
   thread → first Claude request. A fresh server each run, since the first figure is
   about the first event.
3. A crowd: every storage request takes 0.2 s and as many people as one Cloud Run
   instance serves at once (concurrency 40) open a thread at the same moment, then each
   sends a message in their thread at the same moment: p50/p95 of event → greeting and of
   event → first Claude request, and how many greetings were personalised.
4. A fresh process: the real `orion serve` process with memories in the GCS emulator (no
   injected latency) gets `assistant_thread_started` as soon as /healthz answers: event →
   "Restoring your preferences..." visible, and event → greeting visible.

The latency sits in a FaultyProxy in front of the GCS emulator, not in a wrapper around the
store, for the reason bench/thread_start.py gives: every request still goes through the
store's worker threads, google-cloud-storage and its connection pool, so whatever
serialises storage work in production (a write in front of the reads, too few worker
threads, a pool of one connection) shows up here. The proxy's rule matches every request
of every method (an empty match string is a substring of every path). Tracing is off.

When a request reaches Claude is noted by FakeClaude's responder hook, on the fake's own
loop as the request arrives (each message carries a unique word, which tells the turns
apart); Slack is polled every 2 ms (5 ms for the crowd). Between runs the benchmark waits
until storage has been quiet for longer than L, so that no run inherits another's
background work (thread-context saves, end-of-turn summaries). Nothing is asserted: a
greeting or request that never comes is reported as a timeout.

`uv run python -m bench.storage_trouble [--quick]`
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from app.memory.homes import preferences_key
from app.slack.assistant_view import RESTORING_STATUS
from bench.environment import benchmark_environment
from bench.stats import median_ms, percentile_ms, print_table
from tests.fakes import claude_script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.claude_script import Reply
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.fakes.latency_link import LatencyLink
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET, OrionServer, make_settings

LATENCY_S = 0.5  # L: every storage request, scenario 1
CROWD_LATENCY_S = 0.2  # every storage request, scenario 3
CROWD = 40  # Cloud Run's --concurrency
QUICK_CROWD = 10
MEMORY_BUDGET_S = 2.0  # MEMORY_LOAD_TIMEOUT_S default, for the unreachable figures' ratio

POLL_S = 0.002
CROWD_POLL_S = 0.005  # 40 threads polled at once: keep the harness's own CPU down
TIMEOUT_S = 30.0  # generous: a figure past this is reported as "timeout"
CROWD_TIMEOUT_S = 90.0
SETTLE_LIMIT_S = 30.0

GLOBAL_CONTEXT = "Kestrel Labs ships on Thursdays. The staging cluster is called heron.\n" * 20
SHORT_REPLY = "Heron is the staging cluster."
TOKEN = re.compile(r"\bkw[0-9a-f]{8}\b")
PREFIX = "storage trouble"
CONFIG_SLOW = f"every storage request +{LATENCY_S:g} s (L), GCS emulator, tracing off"
CONFIG_DOWN = "storage refusing connections, bucket set, warm server, tracing off"
CONFIG_FRESH = "fresh `orion serve`, GCS emulator, no injected latency, tracing off"


# --- what the person sees -------------------------------------------------------------


def _preference(user: str) -> str:
    """A preference value unique to `user`: the greeting is personalised if it says it."""
    return f"short answers for {user}"


def _channel(user: str) -> str:
    return "D" + user[1:]


def _new_token() -> str:
    return "kw" + uuid.uuid4().hex[:8]


def _seed(emulator: GcsEmulator, users: Sequence[str]) -> str:
    """A fresh bucket with the global context and each user's preferences; its name."""
    bucket = f"orion-bench-{uuid.uuid4().hex[:12]}"
    emulator.create_bucket(bucket)
    emulator.write(bucket, "global/context.md", GLOBAL_CONTEXT)
    for user in users:
        preferences = {"response_style": _preference(user), "timezone": "Europe/Berlin"}
        emulator.write(bucket, preferences_key(user), json.dumps(preferences))
    return bucket


def _wait(predicate: Callable[[], object], timeout: float) -> float | None:
    """Poll until `predicate()` is truthy; the perf_counter time it was seen, or None."""
    deadline = time.perf_counter() + timeout
    while True:
        if predicate():
            return time.perf_counter()
        if time.perf_counter() > deadline:
            return None
        time.sleep(POLL_S)


class FirstRequests:
    """FakeClaude's responder: notes when the first request naming each token arrives
    (`clock()`, on the fake's loop, as the request comes in) and answers every request
    briefly. The clock is the one the caller compares with (another process's send times
    need `time.monotonic`)."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._arrived: dict[str, float] = {}
        self._systems: dict[str, str] = {}

    def __call__(self, body: dict[str, Any]) -> Reply:
        now = self._clock()
        system = body.get("system")
        if isinstance(system, list):
            system = "\n".join(str(block.get("text", "")) for block in system)
        with self._lock:
            for token in TOKEN.findall(last_user_text(body)):
                self._arrived.setdefault(token, now)
                self._systems.setdefault(token, str(system or ""))
        return claude_script.text(SHORT_REPLY)

    def at(self, token: str) -> float | None:
        with self._lock:
            return self._arrived.get(token)

    def system(self, token: str) -> str:
        """The system prompt of the first request naming `token` ("" before it came)."""
        with self._lock:
            return self._systems.get(token, "")


@dataclass(frozen=True)
class Thread:
    user: str
    channel: str
    ts: str


@dataclass(frozen=True)
class Greeting:
    seconds: float | None  # event posted → greeting visible; None: timed out
    status_seconds: float | None  # event posted → "Restoring your preferences..." visible
    personalised: bool


def _greeting_text(slack: FakeSlack, thread: Thread) -> str | None:
    greeting = slack.bot_messages(thread.channel, thread.ts)
    return greeting[0].text if greeting else None


def _restoring_shown(slack: FakeSlack, thread: Thread) -> bool:
    return any(s.status == RESTORING_STATUS for s in slack.statuses(thread.channel, thread.ts))


def _watch_greeting(
    slack: FakeSlack, thread: Thread, started: float, timeout: float = TIMEOUT_S
) -> Greeting:
    """Poll Slack from `started` until the greeting shows (noting the status on the way)."""
    status_at: float | None = None

    def greeted() -> str | None:
        nonlocal status_at
        if status_at is None and _restoring_shown(slack, thread):
            status_at = time.perf_counter()
        return _greeting_text(slack, thread)

    greeted_at = _wait(greeted, timeout - (time.perf_counter() - started))
    if greeted_at is None:
        return Greeting(None, _since(started, status_at), False)
    if status_at is None and _restoring_shown(slack, thread):
        status_at = greeted_at  # the status came between the last two polls
    text = _greeting_text(slack, thread) or ""
    return Greeting(
        greeted_at - started, _since(started, status_at), _preference(thread.user) in text
    )


def _since(started: float, at: float | None) -> float | None:
    return None if at is None else at - started


def _open_thread(slack: FakeSlack, user: str) -> Thread:
    channel = _channel(user)
    return Thread(user, channel, slack.open_assistant_thread(channel))


def _post(url: str, payload: dict[str, Any]) -> None:
    """POST a signed event, as Slack does (to an in-process server or a spawned one)."""
    body = events.json_body(payload)
    headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
    with suppress(httpx.HTTPError):  # reported as a missing greeting or request
        httpx.post(f"{url}/slack/events", content=body, headers=headers, timeout=10)


def _start_thread(
    orion: OrionServer | OrionProcess, slack: FakeSlack, user: str
) -> tuple[Thread, Greeting]:
    """Open a thread, post `assistant_thread_started`, watch for the greeting, and then let
    the thread start finish (suggested prompts set) so that the next step starts clean."""
    thread = _open_thread(slack, user)
    payload = events.assistant_thread_started(user, thread.channel, thread.ts)
    started = time.perf_counter()
    _post(orion.url, payload)
    greeting = _watch_greeting(slack, thread, started)
    if greeting.seconds is not None:
        _wait(lambda: slack.suggested_prompts(thread.channel, thread.ts), TIMEOUT_S)
    return thread, greeting


def _message(slack: FakeSlack, thread: Thread) -> tuple[str, dict[str, Any]]:
    """A user message in `thread`, with a unique word; returns (token, event payload)."""
    token = _new_token()
    # Long enough (with the reply) for the end-of-turn summary to run, as in a real turn.
    text = (
        f"Quick question about {token}: which cluster do we use for staging, and when do we ship?"
    )
    ts = slack.add_user_message(thread.channel, thread.ts, thread.user, text)
    return token, events.user_message_in_thread(thread.user, thread.channel, thread.ts, text, ts)


def _ask(
    orion: OrionServer | OrionProcess, slack: FakeSlack, arrivals: FirstRequests, thread: Thread
) -> float | None:
    """Post a message in `thread`: seconds until Claude got the turn's first request (or
    None); then wait for the reply so that the turn is over."""
    token, payload = _message(slack, thread)
    replies = len(slack.bot_messages(thread.channel, thread.ts))
    started = time.perf_counter()
    _post(orion.url, payload)
    if _wait(lambda: arrivals.at(token), TIMEOUT_S) is None:
        return None
    arrived = arrivals.at(token) or 0.0  # noted by the fake as the request came in
    _wait(lambda: len(slack.bot_messages(thread.channel, thread.ts)) > replies, TIMEOUT_S)
    return arrived - started


def settle(proxy: FaultyProxy | LatencyLink, quiet_s: float) -> None:
    """Wait until no storage request has completed for `quiet_s` (longer than any one
    request takes): the background work of the previous step is over."""
    deadline = time.monotonic() + SETTLE_LIMIT_S
    seen, quiet_since = len(proxy.requests), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        now = len(proxy.requests)
        if now != seen:
            seen, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s:
            return


@contextmanager
def _fakes(storage_url: str | None) -> Iterator[tuple[FakeSlack, FakeClaude, FirstRequests]]:
    with benchmark_environment(storage_url), FakeSlack() as slack, FakeClaude() as claude:
        arrivals = FirstRequests()
        claude.responder = arrivals
        yield slack, claude, arrivals


def _server(slack: FakeSlack, claude: FakeClaude, bucket: str) -> OrionServer:
    settings = make_settings(
        slack,
        claude,
        gcs_memories_bucket=bucket,
        langfuse_public_key=None,
        langfuse_secret_key=None,
    )
    return OrionServer(settings)


def _process(
    slack: FakeSlack, claude: FakeClaude, bucket: str, storage_url: str, workdir: Path
) -> OrionProcess:
    """Orion as its own process (`orion serve`, logging JSON lines at INFO as deployed):
    in the crowd, the harness's 40 clients and the fakes would otherwise share Orion's
    interpreter lock and be counted as Orion's time."""
    env = orion_env(
        slack_url=slack.url,
        claude_url=claude.url,
        port=free_port(),
        STORAGE_EMULATOR_HOST=storage_url,
        GCS_MEMORIES_BUCKET=bucket,
    )
    return OrionProcess(env, cwd=workdir, log_path=workdir / "orion.log")


# --- 1. every storage request slow ------------------------------------------------------


@dataclass(frozen=True)
class SlowRun:
    greeting: Greeting
    message: float | None
    greeting_requests: Counter[str]  # storage requests by method, thread start + after
    message_requests: Counter[str]  # storage requests by method, message + end of turn


def _slow_storage(quick: bool) -> list[tuple[str, str]]:
    runs = 3 if quick else 8
    user = "U0STSLOW"
    quiet_s = LATENCY_S + 0.4
    with GcsEmulator() as emulator, FaultyProxy(emulator.url) as proxy:
        bucket = _seed(emulator, [user])
        with (
            _fakes(proxy.url) as (slack, claude, arrivals),
            _server(slack, claude, bucket) as orion,
        ):
            # Warm-up, no latency: the GCS client's connections and Claude's are open.
            thread, _ = _start_thread(orion, slack, user)
            _ask(orion, slack, arrivals, thread)
            settle(proxy, 0.3)
            first = len(proxy.requests)
            proxy.add_rule("", delay=LATENCY_S)  # every request, every method
            results = [_slow_run(orion, slack, arrivals, proxy, user, quiet_s) for _ in range(runs)]
            slowed = proxy.requests[first:]
            proxy.clear_rules()
    # The matched rule's string ("") says a request was held; None that no rule applied.
    delayed = f"{sum(r.rule == '' for r in slowed)}/{len(slowed)}"
    return _slow_rows(results, runs, delayed)


def _slow_run(
    orion: OrionServer,
    slack: FakeSlack,
    arrivals: FirstRequests,
    proxy: FaultyProxy,
    user: str,
    quiet_s: float,
) -> SlowRun:
    before = len(proxy.requests)
    thread, greeting = _start_thread(orion, slack, user)
    settle(proxy, quiet_s)
    middle = len(proxy.requests)
    message = _ask(orion, slack, arrivals, thread) if greeting.seconds is not None else None
    settle(proxy, quiet_s)
    log = proxy.requests
    return SlowRun(
        greeting,
        message,
        Counter(r.method for r in log[before:middle]),
        Counter(r.method for r in log[middle:]),
    )


def _slow_rows(results: list[SlowRun], runs: int, delayed: str) -> list[tuple[str, str]]:
    greetings = [r.greeting.seconds for r in results]
    messages = [r.message for r in results]
    label = f"{PREFIX}: {CONFIG_SLOW}, n={runs}"
    last = results[-1]
    return [
        (f"{label}: thread start → greeting, median", _median(greetings)),
        (f"{label}: thread start → greeting, median / L", _ratio(greetings, LATENCY_S)),
        (
            f"{label}: thread start → status line visible, median",
            _median([r.greeting.status_seconds for r in results]),
        ),
        (
            f"{label}: personalised greetings",
            f"{sum(r.greeting.personalised for r in results)}/{runs}",
        ),
        (f"{label}: message in open thread → first Claude request, median", _median(messages)),
        (f"{label}: message → first Claude request, median / L", _ratio(messages, LATENCY_S)),
        (
            f"{label}: storage requests per thread start (incl. context save), last run",
            _methods(last.greeting_requests),
        ),
        (
            f"{label}: storage requests per message (incl. end-of-turn work), last run",
            _methods(last.message_requests),
        ),
        (f"{label}: storage requests held by the proxy / all", delayed),
    ]


# --- 2. storage unreachable -----------------------------------------------------------


@dataclass(frozen=True)
class DownRun:
    first: float | None
    second: float | None
    message: float | None


def _storage_down(quick: bool) -> list[tuple[str, str]]:
    runs = 1 if quick else 3
    # A loopback port nobody listens on: every connection is refused at once.
    unreachable = f"http://127.0.0.1:{free_port()}"
    with _fakes(unreachable) as (slack, claude, arrivals):
        results = [_down_run(slack, claude, arrivals, n) for n in range(runs)]
    label = f"{PREFIX}: {CONFIG_DOWN}, n={runs}"
    firsts = [r.first for r in results]
    seconds = [r.second for r in results]
    messages = [r.message for r in results]
    return [
        (f"{label}: first thread → greeting, median", _median(firsts)),
        (
            f"{label}: first greeting / {MEMORY_BUDGET_S:g} s budget",
            _ratio(firsts, MEMORY_BUDGET_S),
        ),
        (f"{label}: second thread → greeting, median", _median(seconds)),
        (f"{label}: message in second thread → first Claude request, median", _median(messages)),
    ]


def _down_run(slack: FakeSlack, claude: FakeClaude, arrivals: FirstRequests, n: int) -> DownRun:
    user = f"U0STDOWN{n}"
    with _server(slack, claude, "orion-bench-unreachable") as orion:
        _, first = _start_thread(orion, slack, user)
        thread, second = _start_thread(orion, slack, user)
        message = _ask(orion, slack, arrivals, thread) if second.seconds is not None else None
    return DownRun(first.seconds, second.seconds, message)


# --- 3. a crowd at once ---------------------------------------------------------------


def _post_together(url: str, payloads: Sequence[dict[str, Any]]) -> list[float]:
    """Post every event at the same moment, one client thread each (each with its
    keep-alive connection already open); returns the moment each post started."""
    barrier = threading.Barrier(len(payloads))

    def post(payload: dict[str, Any]) -> float:
        body = events.json_body(payload)
        headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
        with httpx.Client(base_url=url, timeout=TIMEOUT_S) as client:
            client.get("/healthz")
            barrier.wait(timeout=TIMEOUT_S)
            started = time.perf_counter()
            with suppress(httpx.HTTPError):  # reported as a missing greeting or request
                client.post("/slack/events", content=body, headers=headers)
        return started

    with ThreadPoolExecutor(max_workers=len(payloads)) as pool:
        return list(pool.map(post, payloads))


def _watch_all(
    seen: Callable[[int], bool], starts: Sequence[float], timeout: float
) -> list[float | None]:
    """Poll until `seen(i)` for every i; seconds from each start, None for those missing."""
    found: list[float | None] = [None] * len(starts)
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        pending = [i for i, at in enumerate(found) if at is None]
        if not pending:
            break
        for i in pending:
            if seen(i):
                found[i] = time.perf_counter() - starts[i]
        time.sleep(CROWD_POLL_S)
    return found


def _crowd(quick: bool) -> list[tuple[str, str]]:
    people = QUICK_CROWD if quick else CROWD
    users = [f"U0STCROWD{i:02d}" for i in range(people)]
    quiet_s = CROWD_LATENCY_S + 0.4
    with GcsEmulator() as emulator, FaultyProxy(emulator.url) as proxy:
        bucket = _seed(emulator, users)
        with (
            _fakes(proxy.url) as (slack, claude, arrivals),
            tempfile.TemporaryDirectory() as tmp,
            _process(slack, claude, bucket, proxy.url, Path(tmp)) as orion,
        ):
            warm, _ = _start_thread(orion, slack, "U0STWARM")
            _ask(orion, slack, arrivals, warm)
            settle(proxy, 0.3)
            proxy.add_rule("", delay=CROWD_LATENCY_S)
            threads = [_open_thread(slack, user) for user in users]
            greetings = _crowd_greetings(orion, slack, threads)
            personalised = sum(
                _preference(t.user) in (_greeting_text(slack, t) or "") for t in threads
            )
            _watch_all(
                lambda i: bool(slack.suggested_prompts(threads[i].channel, threads[i].ts)),
                [0.0] * people,
                CROWD_TIMEOUT_S,
            )
            settle(proxy, quiet_s)
            requests = _crowd_messages(orion, slack, arrivals, threads)
            settle(proxy, quiet_s)
            proxy.clear_rules()
    label = (
        f"{PREFIX}: {people} people at once"
        + (f" (quick mode; full mode: {CROWD})" if quick else "")
        + f", GCS emulator, every storage request +{CROWD_LATENCY_S:g} s, tracing off"
    )
    return [
        (f"{label}: thread start → greeting, p50 / p95", _p50_p95(greetings)),
        (f"{label}: greeting p50 / p95 ÷ {CROWD_LATENCY_S:g} s", _p50_p95_ratio(greetings)),
        (f"{label}: personalised greetings", f"{personalised}/{people}"),
        (f"{label}: message → first Claude request, p50 / p95", _p50_p95(requests)),
        (
            f"{label}: first Claude request p50 / p95 ÷ {CROWD_LATENCY_S:g} s",
            _p50_p95_ratio(requests),
        ),
    ]


def _crowd_greetings(
    orion: OrionProcess, slack: FakeSlack, threads: Sequence[Thread]
) -> list[float | None]:
    payloads = [events.assistant_thread_started(t.user, t.channel, t.ts) for t in threads]
    starts = _post_together(orion.url, payloads)
    return _watch_all(lambda i: bool(_greeting_text(slack, threads[i])), starts, CROWD_TIMEOUT_S)


def _crowd_messages(
    orion: OrionProcess, slack: FakeSlack, arrivals: FirstRequests, threads: Sequence[Thread]
) -> list[float | None]:
    """One message per thread, all at once: seconds until each turn's first Claude request."""
    messages = [_message(slack, t) for t in threads]
    starts = _post_together(orion.url, [payload for _, payload in messages])
    tokens = [token for token, _ in messages]
    _watch_all(lambda i: arrivals.at(tokens[i]) is not None, starts, CROWD_TIMEOUT_S)
    # Arrival times were noted by the fake as the requests came in, not by the poll.
    found = [arrivals.at(token) for token in tokens]
    _watch_all(
        lambda i: len(slack.bot_messages(threads[i].channel, threads[i].ts)) > 1,
        starts,
        CROWD_TIMEOUT_S,
    )
    return [None if at is None else at - start for at, start in zip(found, starts, strict=True)]


# --- 4. a fresh process ---------------------------------------------------------------


def _fresh_process(quick: bool) -> list[tuple[str, str]]:
    runs = 1 if quick else 3
    user = "U0STFRESH"
    results: list[Greeting] = []
    healthy: list[float | None] = []
    with (
        GcsEmulator() as emulator,
        FakeSlack() as slack,
        FakeClaude() as claude,
        tempfile.TemporaryDirectory() as tmp,
    ):
        bucket = _seed(emulator, [user])
        for _ in range(runs):
            spawn_to_healthy, greeting = _fresh_run(
                emulator, slack, claude, bucket, user, Path(tmp)
            )
            healthy.append(spawn_to_healthy)
            results.append(greeting)
    label = f"{PREFIX}: {CONFIG_FRESH}, n={runs}"
    return [
        (f"{label}: spawn → /healthz 200, median", _median(healthy)),
        (
            f"{label}: event (at /healthz 200) → '{RESTORING_STATUS}' visible, median",
            _median([g.status_seconds for g in results]),
        ),
        (f"{label}: event → greeting visible, median", _median([g.seconds for g in results])),
        (f"{label}: personalised greetings", f"{sum(g.personalised for g in results)}/{runs}"),
    ]


def _fresh_run(
    emulator: GcsEmulator,
    slack: FakeSlack,
    claude: FakeClaude,
    bucket: str,
    user: str,
    workdir: Path,
) -> tuple[float | None, Greeting]:
    env = orion_env(
        slack_url=slack.url,
        claude_url=claude.url,
        port=free_port(),
        STORAGE_EMULATOR_HOST=emulator.url,
        GCS_MEMORIES_BUCKET=bucket,
    )
    orion = OrionProcess(env, cwd=workdir, log_path=workdir / "orion.log")
    spawned = orion.start()
    try:
        try:
            healthy = orion.wait_healthy(timeout=TIMEOUT_S)
        except (TimeoutError, RuntimeError):
            return None, Greeting(None, None, False)
        thread = _open_thread(slack, user)
        body = events.json_body(events.assistant_thread_started(user, thread.channel, thread.ts))
        headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
        started = time.perf_counter()
        with suppress(httpx.HTTPError):  # reported as a missing greeting
            httpx.post(f"{orion.url}/slack/events", content=body, headers=headers, timeout=10)
        greeting = _watch_greeting(slack, thread, started)
        if greeting.seconds is not None:
            _wait(lambda: slack.suggested_prompts(thread.channel, thread.ts), TIMEOUT_S)
    finally:
        orion.stop()
    return healthy - spawned, greeting


# --- reporting ------------------------------------------------------------------------


def _arrived(values: Sequence[float | None]) -> list[float]:
    return [v for v in values if v is not None]


def _missing(values: Sequence[float | None]) -> str:
    missed = len(values) - len(_arrived(values))
    return f" ({missed}/{len(values)} timed out after {TIMEOUT_S:g} s)" if missed else ""


def _median(values: Sequence[float | None]) -> str:
    arrived = _arrived(values)
    if not arrived:
        return "timeout"
    return f"{median_ms(arrived)} ms{_missing(values)}"


def _ratio(values: Sequence[float | None], unit_s: float) -> str:
    arrived = _arrived(values)
    if not arrived:
        return "timeout"
    return f"{median_ms(arrived) / 1000 / unit_s:.2f}×"


def _p50_p95(values: Sequence[float | None]) -> str:
    arrived = _arrived(values)
    if not arrived:
        return "timeout"
    p50, p95 = percentile_ms(arrived, 50), percentile_ms(arrived, 95)
    return f"{p50} / {p95} ms{_missing(values)}"


def _p50_p95_ratio(values: Sequence[float | None]) -> str:
    arrived = _arrived(values)
    if not arrived:
        return "timeout"
    p50, p95 = percentile_ms(arrived, 50), percentile_ms(arrived, 95)
    return f"{p50 / 1000 / CROWD_LATENCY_S:.2f}× / {p95 / 1000 / CROWD_LATENCY_S:.2f}×"


def _methods(requests: Counter[str]) -> str:
    by_method = ", ".join(f"{method} {count}" for method, count in sorted(requests.items()))
    return f"{sum(requests.values())} ({by_method})"


def _guarded(
    name: str, scenario: Callable[[bool], list[tuple[str, str]]], quick: bool
) -> list[tuple[str, str]]:
    """One scenario that breaks must not hide the others' figures."""
    try:
        return scenario(quick)
    except Exception as exc:
        return [(f"{PREFIX}: {name}: FAILED", f"{type(exc).__name__}: {exc}")]


def run(quick: bool) -> list[tuple[str, str]]:
    return [
        *_guarded("slow storage", _slow_storage, quick),
        *_guarded("storage unreachable", _storage_down, quick),
        *_guarded("crowd", _crowd, quick),
        *_guarded("fresh process", _fresh_process, quick),
    ]


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
