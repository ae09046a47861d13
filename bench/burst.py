"""Bursts: as many people as one Cloud Run instance takes at once (`--concurrency` in
cloudbuild.yaml) open a thread at the same moment while every storage request takes
L = 0.2 s, then each sends a first message at the same moment. Orion as deployed (one
`orion serve` process, measured from the moment `/readyz` answers 200), and a plain
baseline bot (bench/baseline_bot.py: Bolt + anthropic + google-cloud-storage, no tuning,
one process as a plain Bolt app runs), in the same run, at the same L, against the same
fakes. Twice the deployed concurrency is measured too, to show where one process stops
meeting the goal.

For each bot and burst size (`--quick`: 20), in several rounds:
- event posted → greeting visible (p50 / p95), and how many greetings named the person's
  own stored preference (recognised);
- first message posted → the turn's first request reaching Claude (p50 / p95);
- the bot process's CPU per greeting and per first message (user + system, from the OS,
  from the posts until storage has gone quiet: the saves after each greeting, the
  end-of-turn work after each answer included), and storage requests per greeting and per
  message (counted by the link in front of the emulator, background work included);
- a floor for the burst's slowest greeting: one storage round trip plus the bot's own CPU
  for the whole burst on one core (a Python process computes on one core at a time);
- the CPU of the fakes per greeting (Slack, Claude, the latency link, the emulator), and
  the rig's own floor: one round trip plus that CPU on the cores left to the rig. Where a
  bot's p95 sits near it, the rig, not the bot, is the limit.
Rounds use fresh people (preferences seeded straight into the emulator, outside the
link): each greeting is someone's first, as in the morning rush. After each burst the
bucket is emptied back to the organisation's context, outside the link: the emulator's
in-memory backend spends CPU on every request in proportion to the objects it holds (0.6 ms
per write and read in an empty bucket, 11.5 ms beside 10,000 objects), which real GCS does
not, and 30 bursts leave about 15,000 objects; kept, they made the later rounds measure the
emulator. The figures are the
medians over rounds of each round's p50 / p95, so that one round slowed by another
process on the machine does not decide them.

As deployed with `--cpu=1`, each bot runs alone on one core of the machine and everything
else of the rig (the fakes, the emulator, the load client) on the others, where the machine
has more than one.

The latency sits in a LatencyLink in front of the GCS emulator (tests/fakes/latency_link.py:
it holds each request's bytes for L and counts the requests; an HTTP proxy that parses and
remakes each request cost the rig's one core ~1.2 ms a request, 11–14 ms a person).
Events are posted by a separate load process (bench/load_client.py) that notes when each was
sent; when the greeting arrived is the fake Slack's own note of its `chat.postMessage`, and
when Claude got a turn's first request the fake Claude's (each message carries a unique
word): the harness polls only for "all done", every 100 ms, so that its own CPU stays off
the two cores the bots share with it (every 20 ms, its polling doubled the fakes' CPU per
greeting).

`uv run python -m bench.burst [--quick]`
"""

from __future__ import annotations

import contextlib
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from app.memory.homes import preferences_key
from bench.stats import percentile_ms, print_table
from bench.storage_trouble import FirstRequests, settle
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.gcs import GcsEmulator
from tests.fakes.latency_link import LatencyLink
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET

LATENCY_S = 0.2  # L: every storage request
QUICK_SIZES = (20,)
ROUNDS = 5
QUICK_ROUNDS = 1
POLL_S = 0.1
TIMEOUT_S = 60.0
CLOUDBUILD = Path(__file__).resolve().parents[1] / "cloudbuild.yaml"


def deployed_concurrency() -> int:
    """What cloudbuild.yaml deploys with (`--concurrency=N`): the burst one process takes."""
    found = re.search(r"--concurrency=(\d+)", CLOUDBUILD.read_text())
    assert found is not None, "cloudbuild.yaml sets no --concurrency"
    return int(found.group(1))


QUIET_S = LATENCY_S + 0.4  # no storage request for this long: the background work is over

GLOBAL_CONTEXT_NAME = "global/context.md"
GLOBAL_CONTEXT = "Kestrel Labs ships on Thursdays. The staging cluster is called heron.\n" * 20


@dataclass(frozen=True)
class BotKind:
    name: str
    argv: list[str] | None = None  # None: `orion serve`


# Orion as deployed (one process per instance), and the baseline, as a plain Bolt app runs.
BOTS = (
    BotKind("Orion"),
    BotKind("baseline", [sys.executable, "-m", "bench.baseline_bot"]),
)


@dataclass
class Bot:
    kind: BotKind
    process: OrionProcess
    cpu: psutil.Process

    @property
    def name(self) -> str:
        return self.kind.name


def _preferences_key(bot: Bot, user: str) -> str:
    """Where each bot keeps a person's preferences: Orion in the person's home, the
    baseline where a plain bot would."""
    if bot.kind.argv is None:
        return preferences_key(user)
    return f"users/{user}/preferences.json"


@dataclass
class Burst:
    """One burst of one bot: what each person saw, and what it cost the bot."""

    greetings: list[float] = field(default_factory=list)
    recognised: int = 0
    first_requests: list[float] = field(default_factory=list)
    cpu_per_greeting_ms: float = 0.0
    cpu_per_message_ms: float = 0.0
    rig_cpu_per_greeting_ms: float = 0.0  # the fakes and the load client
    requests_per_greeting: float = 0.0
    requests_per_message: float = 0.0
    missing: int = 0
    remembered: int = 0  # first Claude requests carrying the person's own preference


@dataclass(frozen=True)
class Thread:
    user: str
    channel: str
    ts: str


def _preference(user: str) -> str:
    return f"short answers for {user}"


def _post_all(url: str, bodies: list[dict[str, Any]]) -> list[float]:
    """Post the events at once from bench/load_client.py; when each was sent."""
    requests = []
    for payload in bodies:
        body = events.json_body(payload)
        headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
        requests.append({"body": body.decode(), "headers": headers})
    spec = {
        "url": f"{url}/slack/events",
        "health_url": f"{url}/healthz",
        "requests": requests,
        "sent_at": True,
    }
    done = subprocess.run(
        [sys.executable, "-m", "bench.load_client"],
        input=json.dumps(spec),
        stdout=subprocess.PIPE,
        text=True,
        check=True,
        timeout=TIMEOUT_S,
    )
    return json.loads(done.stdout)["sent_at"]


def _wait(predicate: Callable[[], bool], timeout: float = TIMEOUT_S) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL_S)
    return True


def _rig_cpu_s() -> float:
    """CPU of the fakes the burst keeps busy: this process (the fakes of Slack and Claude,
    the latency link) and the GCS emulator. On a 2-core machine they share the bot's
    cores, as Slack and GCS would not. (The load client, a process of its own, mostly
    starts up before it sends; it is left out.)"""
    me = psutil.Process()
    times = me.cpu_times()
    total = times.user + times.system
    for child in me.children():
        with contextlib.suppress(psutil.NoSuchProcess):
            if "fake-gcs-server" in " ".join(child.cmdline()):
                emulator = child.cpu_times()
                total += emulator.user + emulator.system
    return total


def _cpu_s(bot: Bot) -> float:
    """The bot's CPU so far."""
    times = bot.cpu.cpu_times()
    return times.user + times.system


def _first_posts(slack: FakeSlack, since: int, threads: list[Thread]) -> dict[Thread, Any]:
    """Each thread's first bot message posted since call number `since` (the greeting)."""
    wanted = {(t.channel, t.ts): t for t in threads}
    found: dict[Thread, Any] = {}
    for call in slack.calls[since:]:
        if call.method != "chat.postMessage":
            continue
        thread = wanted.get((call.args.get("channel"), call.args.get("thread_ts")))
        if thread is not None and thread not in found:
            found[thread] = call
    return found


def _burst(
    bot: Bot,
    size: int,
    tag: str,
    *,
    emulator: GcsEmulator,
    bucket: str,
    link: LatencyLink,
    slack: FakeSlack,
    arrivals: FirstRequests,
    racing: bool = False,
) -> Burst:
    """`racing`: each first message is posted as soon as all greetings show, while the
    thread starts' saves may still run (a quick typer; the agent experience's first DM)."""
    users = [f"U0{tag}{i:03d}" for i in range(size)]
    for user in users:
        preferences = {"response_style": _preference(user), "timezone": "Europe/Berlin"}
        emulator.write(bucket, _preferences_key(bot, user), json.dumps(preferences))
    threads = []
    for user in users:
        channel = "D" + user[1:]
        threads.append(Thread(user, channel, slack.open_assistant_thread(channel)))
    result = Burst()

    # Thread starts, all at once.
    calls, requests, cpu, rig = len(slack.calls), len(link.requests), _cpu_s(bot), _rig_cpu_s()
    sent = _post_all(
        bot.process.url,
        [events.assistant_thread_started(t.user, t.channel, t.ts) for t in threads],
    )
    _wait(lambda: len(_first_posts(slack, calls, threads)) == size)
    if not racing:
        _wait(lambda: all(slack.suggested_prompts(t.channel, t.ts) for t in threads))
        settle(link, QUIET_S)
        result.cpu_per_greeting_ms = (_cpu_s(bot) - cpu) * 1000 / size
        result.rig_cpu_per_greeting_ms = (_rig_cpu_s() - rig) * 1000 / size
        result.requests_per_greeting = (len(link.requests) - requests) / size
    greetings = _first_posts(slack, calls, threads)
    for thread, at in zip(threads, sent, strict=True):
        call = greetings.get(thread)
        if call is None:
            result.missing += 1
            continue
        result.greetings.append(call.at - at)
        result.recognised += _preference(thread.user) in (call.args.get("text") or "")

    # First messages, all at once.
    tokens, payloads = [], []
    for thread in threads:
        token = "kw" + uuid.uuid4().hex[:8]
        text = f"Quick question about {token}: which cluster do we use for staging?"
        ts = slack.add_user_message(thread.channel, thread.ts, thread.user, text)
        tokens.append(token)
        payloads.append(
            events.user_message_in_thread(thread.user, thread.channel, thread.ts, text, ts)
        )
    requests, cpu = len(link.requests), _cpu_s(bot)
    sent = _post_all(bot.process.url, payloads)
    _wait(lambda: all(arrivals.at(token) is not None for token in tokens))
    _wait(lambda: all(len(slack.bot_messages(t.channel, t.ts)) > 1 for t in threads))
    settle(link, QUIET_S)
    result.cpu_per_message_ms = (_cpu_s(bot) - cpu) * 1000 / size
    _empty(emulator, bucket)
    result.requests_per_message = (len(link.requests) - requests) / size
    for thread, token, at in zip(threads, tokens, sent, strict=True):
        arrived = arrivals.at(token)
        if arrived is None:
            result.missing += 1
        else:
            result.first_requests.append(arrived - at)
            result.remembered += _preference(thread.user) in arrivals.system(token)
    return result


def _empty(emulator: GcsEmulator, bucket: str) -> None:
    """Delete every object but the organisation's context, straight on the emulator."""
    for name in emulator.names(bucket):
        if name != GLOBAL_CONTEXT_NAME:
            emulator.delete(bucket, name)


@contextmanager
def _bots(
    slack: FakeSlack, claude: FakeClaude, bucket: str, storage_url: str, workdir: Path
) -> Iterator[list[Bot]]:
    """Orion (`orion serve`, JSON logs at INFO as deployed) and the baseline bot, each its
    own server, configured alike, each ready (`/readyz` 200) before it is measured."""
    with ExitStack() as stack:
        bots = []
        for n, kind in enumerate(BOTS):
            env = orion_env(
                slack_url=slack.url,
                claude_url=claude.url,
                port=free_port(),
                STORAGE_EMULATOR_HOST=storage_url,
                GCS_MEMORIES_BUCKET=bucket,
            )
            log_path = workdir / f"bot{n}.log"
            process = OrionProcess(env, cwd=workdir, log_path=log_path, argv=kind.argv)
            process.start()
            stack.callback(process.stop)
            assert process.process is not None
            bot_process = psutil.Process(process.process.pid)
            if BOT_CORE is not None:
                bot_process.cpu_affinity([BOT_CORE])
            process.wait_healthy()
            _wait(lambda process=process: _ready(process.url))
            bots.append(Bot(kind, process, bot_process))
        yield bots


def _ready(url: str) -> bool:
    """/readyz 200 (the baseline bot has none: 404, its /healthz answered already)."""
    import httpx

    return httpx.get(f"{url}/readyz", timeout=5).status_code in (200, 404)


# The bots' core (`--cpu=1`), and the rest of the machine for the rig; None on one core.
BOT_CORE = 0 if (psutil.cpu_count() or 1) > 1 else None


def run(quick: bool) -> list[tuple[str, str]]:
    if BOT_CORE is not None:  # the rig, and the children it starts, keep off the bots' core
        psutil.Process().cpu_affinity([c for c in range(psutil.cpu_count() or 1) if c != BOT_CORE])
    concurrency = deployed_concurrency()
    sizes, rounds = (
        (QUICK_SIZES, QUICK_ROUNDS) if quick else ((concurrency, 2 * concurrency), ROUNDS)
    )
    # Each size as people wait for the greeting's saves, the largest first (its first
    # round is a process's first burst), and the largest again writing as soon as greeted.
    scenarios = [(size, False) for size in sorted(sizes, reverse=True)] + [(max(sizes), True)]
    results: dict[tuple[str, int, bool], list[Burst]] = {}
    with (
        GcsEmulator() as emulator,
        LatencyLink(emulator.url, delay=0.0) as link,
        FakeSlack() as slack,
        FakeClaude() as claude,
        tempfile.TemporaryDirectory() as tmp,
    ):
        arrivals = FirstRequests(clock=time.monotonic)  # compared with the load client's
        claude.responder = arrivals
        bucket = f"orion-bench-{uuid.uuid4().hex[:12]}"
        emulator.create_bucket(bucket)
        emulator.write(bucket, GLOBAL_CONTEXT_NAME, GLOBAL_CONTEXT)
        with _bots(slack, claude, bucket, link.url, Path(tmp)) as bots:
            common = {
                "emulator": emulator,
                "bucket": bucket,
                "link": link,
                "slack": slack,
                "arrivals": arrivals,
            }
            # No warm-up: measured from /readyz on, as an instance Cloud Run has just
            # started takes its first burst (later rounds find its connections open).
            link.delay = LATENCY_S  # every request, every method
            for round_ in range(rounds):
                for size, racing in scenarios:
                    for n, bot in enumerate(bots):
                        tag = f"R{round_}{n}S{size}{'Q' if racing else ''}"
                        results.setdefault((bot.name, size, racing), []).append(
                            _burst(bot, size, tag, racing=racing, **common)
                        )
    rows = []
    for size, racing in scenarios:
        for kind in BOTS:
            bursts = results[(kind.name, size, racing)]
            rows += _rows(
                kind, size, rounds, bursts, racing=racing, fresh=(size, racing) == scenarios[0]
            )
    return rows


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _rows(
    kind: BotKind, size: int, rounds: int, bursts: list[Burst], *, racing: bool, fresh: bool
) -> list[tuple[str, str]]:
    """`fresh`: the scenario each bot's process took first, just after /readyz."""
    label = (
        f"burst: {kind.name}, {size} people at once"
        f"{' writing as soon as greeted' if racing else ''}, every storage request "
        f"+{LATENCY_S:g} s, median of {rounds} round{'s' if rounds > 1 else ''}"
    )
    greeting_p50 = _median([percentile_ms(b.greetings, 50) for b in bursts if b.greetings])
    greeting_p95 = _median([percentile_ms(b.greetings, 95) for b in bursts if b.greetings])
    first_p50 = _median([percentile_ms(b.first_requests, 50) for b in bursts if b.first_requests])
    first_p95 = _median([percentile_ms(b.first_requests, 95) for b in bursts if b.first_requests])
    cpu = _median([b.cpu_per_greeting_ms for b in bursts])
    goal_ms = (2 * LATENCY_S + 0.4) * 1000
    floor_ms = LATENCY_S * 1000 + cpu * size
    rig = _median([b.rig_cpu_per_greeting_ms for b in bursts])
    rig_cores = max(1, (psutil.cpu_count() or 1) - (BOT_CORE is not None))
    rig_floor_ms = LATENCY_S * 1000 + rig * size / rig_cores
    missing = sum(b.missing for b in bursts)
    rows = [
        (
            f"{label}: thread start → greeting, p50 / p95 (goal p95 ≤ {goal_ms:.0f} ms)",
            f"{greeting_p50:.0f} / {greeting_p95:.0f} ms",
        ),
        (
            f"{label}: recognised (greeted with their own preference), worst round",
            f"{min(b.recognised for b in bursts)}/{size}",
        ),
        (
            f"{label}: first message → first Claude request, p50 / p95 (goal p95 ≤ 1000 ms)",
            f"{first_p50:.0f} / {first_p95:.0f} ms",
        ),
        (
            f"{label}: turns that reached Claude with the person's memory, worst round "
            "(goal ≥ 95%)",
            f"{min(b.remembered for b in bursts)}/{size}",
        ),
        (
            f"{label}: CPU per greeting / per first message (incl. work after each)",
            f"{cpu:.1f} / {_median([b.cpu_per_message_ms for b in bursts]):.1f} ms",
        ),
        (
            f"{label}: storage requests per greeting / per first message",
            f"{_median([b.requests_per_greeting for b in bursts]):.1f} / "
            f"{_median([b.requests_per_message for b in bursts]):.1f}",
        ),
        (
            f"{label}: floor for the last greeting (L + the burst's CPU on one core)",
            f"{floor_ms:.0f} ms",
        ),
        (
            f"{label}: CPU of the fakes (Slack, Claude, latency link, GCS emulator) per greeting, "
            f"and the rig's own floor (L + that CPU on its {rig_cores} core(s))",
            f"{rig:.1f} ms, {rig_floor_ms:.0f} ms",
        ),
        (f"{label}: greetings or requests that never came", str(missing)),
    ]
    if racing:  # the greetings' own CPU and requests run into the messages': not apart
        rows = [row for row in rows if "per greeting" not in row[0] and "floor" not in row[0]]
    if fresh:
        first = bursts[0]  # on a process that had just answered /readyz
        rows.append(
            (
                f"{label}: its first round alone (a process just ready): greeting p95 / "
                "first Claude request p95 / turns with memory",
                f"{percentile_ms(first.greetings, 95):.0f} / "
                f"{percentile_ms(first.first_requests, 95):.0f} ms / {first.remembered}/{size}",
            )
        )
    return rows


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
