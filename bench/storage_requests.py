"""Storage requests per step: every request a returning person's thread start and message
(with its turn end) make, counted and named as the bucket sees them, in both experiences.

`orion serve` runs as deployed against the fake Slack and Claude, its bucket in the GCS
emulator behind a proxy that records every request (tests/fakes/fault_proxy.py), so
nothing inside Orion can hide one. Each person first lives through two conversations in
Orion itself (saying their name in the first), so what they own is whatever the layout
of the day makes of that: no key is known here. Setup, stages and goals: the "Storage
requests per step" section of docs/benchmarks.md. Reported, never asserted.

`uv run python -m bench.storage_requests [--quick]` (`--quick`: one person, one message)
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import httpx

from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy, ProxiedRequest
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import Call, FakeSlack
from tests.fakes.slack_model import TEAM_ID
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET

QUIET_S = 0.5
TIMEOUT_S = 60.0
POLL_S = 0.02
START_GOAL = 4
MESSAGE_GOAL = 8

# The organisation's context: a fixed point of the layout (docs/architecture.md).
GLOBAL_CONTEXT_KEY = "global/context.md"
GLOBAL_CONTEXT = "Kestrel Labs ships on Thursdays. The staging cluster is called heron.\n"
# The first earlier conversation: a name said in passing (heard without a model).
FIRST_WORDS = "Call me Sam. Can you review the Q3 budget with me? We are 20% over plan."
LATER_WORDS = "Which regions drove the cloud spend in July?"
QUESTION = "Which cluster do we use for staging, and when do we ship?"
FOLLOW_UP = "And who owns the heron cluster?"
ANSWER = "Sam, staging runs on heron; we ship on Thursdays."
SUMMARY = (
    "# Q3 budget review\n"
    "Sam reviews the Q3 budget, 20% over plan; cloud costs first.\n"
    "Welcome: Welcome back, Sam! Shall we continue the Q3 budget review?\n"
    "Next: Continue the budget review"
)

# --- what one request is -----------------------------------------------------------------

READ, READ_METADATA, LIST = "read", "read metadata", "list"
WRITE, CONDITIONAL_WRITE, CREATE = "write", "cond. write", "cond. write (new)"
DELETE, CONDITIONAL_DELETE, OTHER = "delete", "cond. delete", "other"
READS = (READ, READ_METADATA)
WRITES = (WRITE, CONDITIONAL_WRITE, CREATE, DELETE, CONDITIONAL_DELETE)

_BUCKET = re.compile(r"/storage/v1/b/([^/]+)")
_OBJECT = re.compile(r"^/(?:download/)?storage/v1/b/[^/]+/o/(?P<name>[^/?]+)$")
_OBJECTS = re.compile(r"^/(?:upload/)?storage/v1/b/[^/]+/o/?$")


@dataclass(frozen=True)
class StorageRequest:
    """One request Orion sent to the bucket."""

    kind: str  # READ, LIST, WRITE, CREATE (ifGenerationMatch=0), … (the constants above)
    name: str  # the object, or a listing's prefix; percent-decoded, without the bucket
    status: int
    started: float  # time.monotonic() when it reached the proxy

    @property
    def reads(self) -> bool:
        return self.kind in READS

    @property
    def writes(self) -> bool:
        return self.kind in WRITES


def bucket_of(proxied: ProxiedRequest) -> str | None:
    """The bucket a request is for (None: none named, such as listing the buckets)."""
    found = _BUCKET.search(urlsplit(proxied.path_qs).path)
    return unquote(found[1]) if found else None


def storage_request(proxied: ProxiedRequest) -> StorageRequest:
    """What a request the proxy saw did to which object, from GCS's JSON API: downloads
    and object GETs read, uploads (the name in the body: `upload_name`) and PATCHes
    write, `ifGenerationMatch` makes a write or delete conditional (0: only if absent)."""
    url = urlsplit(proxied.path_qs)
    query = {key: values[0] for key, values in parse_qs(url.query).items()}
    method, path = proxied.method, url.path
    conditional = "ifGenerationMatch" in query or "ifMetagenerationMatch" in query
    kind, name = OTHER, f"{method} {unquote(path)}"
    if found := _OBJECT.match(path):
        name = unquote(found["name"])
        if method == "GET":
            media = query.get("alt") == "media" or path.startswith("/download/")
            kind = READ if media else READ_METADATA
        elif method == "DELETE":
            kind = CONDITIONAL_DELETE if conditional else DELETE
        elif method in ("PATCH", "PUT"):
            kind = CONDITIONAL_WRITE if conditional else WRITE
    elif _OBJECTS.match(path):
        if method == "GET":
            kind, name = LIST, query.get("prefix", "") + "*"
        elif method == "POST" and path.startswith("/upload/"):
            name = query.get("name") or proxied.upload_name or "?"
            if query.get("ifGenerationMatch") == "0":
                kind = CREATE
            else:
                kind = CONDITIONAL_WRITE if conditional else WRITE
    return StorageRequest(kind, name, proxied.status, proxied.started)


def _touch(request: StorageRequest) -> tuple[str, str]:
    """How a request touches its object: reading, writing (deleting too) or listing."""
    how = "read" if request.reads else "write" if request.writes else request.kind
    return how, request.name


def repeated(requests: list[StorageRequest]) -> set[tuple[str, str]]:
    """The (how, object) pairs that happen more than once among `requests`: an object
    read twice, written (or deleted) twice, a prefix listed twice."""
    return {touch for touch, count in Counter(map(_touch, requests)).items() if count > 1}


def touched_twice(requests: list[StorageRequest]) -> list[str]:
    """The objects read twice or written twice among `requests`, in order of first touch."""
    again = repeated(requests)
    return list(dict.fromkeys(r.name for r in requests if _touch(r) in again))


class Names:
    """Object names as a person reads them: each of the scenario's own ids (person, DM,
    threads, events) replaced by what it is, wherever the layout puts it (a thread ts
    also with its dot written as `-` or `_`; an id shorter than MIN_ANYWHERE only as a
    whole path segment), and hex runs of 16 or more (hashed ids) cut to 6 characters."""

    MIN_ANYWHERE = 6
    _HEX = re.compile(r"[0-9a-f]{16,}")

    def __init__(self) -> None:
        self._anywhere: dict[str, str] = {}
        self._segments: dict[str, str] = {}

    def add(self, value: str, label: str) -> None:
        for variant in {value, value.replace(".", "-"), value.replace(".", "_")}:
            short = len(variant) < self.MIN_ANYWHERE
            (self._segments if short else self._anywhere)[variant] = "{" + label + "}"

    def readable(self, name: str) -> str:
        name = "/".join(self._segments.get(part, part) for part in name.split("/"))
        # Longest first: a thread ts is not cut apart by a shorter id inside it.
        for value in sorted(self._anywhere, key=len, reverse=True):
            name = name.replace(value, self._anywhere[value])
        return self._HEX.sub(lambda hit: hit[0][:6] + "…", name)


# --- one step ----------------------------------------------------------------------------

# Stages of a step, in order: before what the person sees (the greeting; for a message,
# before Claude is asked), while it is written (the answer streaming), after it.
BEFORE, DURING, AFTER = 0, 1, 2
START_STAGES = ("before greeting", "", "after greeting")
MESSAGE_STAGES = ("before Claude", "answering", "turn end")


@dataclass(frozen=True)
class Named:
    stage: int
    request: StorageRequest
    readable: str


@dataclass
class Step:
    """What one step (a thread start, a message with its turn end) sent to the bucket."""

    label: str
    goal: int
    stages: tuple[str, str, str]
    requests: list[Named] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # anything odd about how it went
    silence: float = 0.0  # the longest time between its requests with none in flight

    def count(self, predicate: Callable[[StorageRequest], bool]) -> int:
        return sum(1 for named in self.requests if predicate(named.request))

    def in_stage(self, stage: int) -> int:
        return sum(1 for named in self.requests if named.stage == stage)

    @property
    def twice(self) -> list[str]:
        return touched_twice([named.request for named in self.requests])

    @property
    def over_goal(self) -> bool:
        return len(self.requests) > self.goal or bool(self.twice)


def _stage(at: float, seen: float | None, done: float | None) -> int:
    if seen is None or at < seen:
        return BEFORE
    return AFTER if done is None or at >= done else DURING


class AnswerRequests:
    """FakeClaude's responder: answers each turn (a streamed request) with ANSWER, noting
    when it came, and anything else (the turn end's summary) with SUMMARY."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    def __call__(self, body: dict[str, Any]) -> script.ScriptItem:
        if body.get("stream"):
            self.asked.append(time.monotonic())
            return script.text(ANSWER)
        return script.text(SUMMARY)

    def first_since(self, moment: float) -> float | None:
        return next((at for at in self.asked if at >= moment), None)


Moment = Callable[[float], float | None]  # since a step began: when something happened


@dataclass
class Rig:
    """One Orion process and the fakes around it, for one person at a time."""

    url: str
    bucket: str  # the process's own: requests for another are not its steps'
    proxy: FaultyProxy
    slack: FakeSlack
    claude: AnswerRequests
    names: Names = field(default_factory=Names)
    _open: _OpenStep | None = None

    def post(self, payload: dict[str, Any]) -> None:
        body = events.json_body(payload)
        headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
        response = httpx.post(f"{self.url}/slack/events", content=body, headers=headers, timeout=10)
        if response.status_code != 200:
            raise RuntimeError(f"event not acknowledged: {response.status_code}")
        self.names.add(payload["event_id"], "event")

    def quiet(self) -> None:
        """Wait until no storage request has been in flight or answered for QUIET_S."""
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            answered = self.proxy.requests
            last = max((p.finished for p in answered), default=0.0)
            idle = not self.proxy.in_flight and time.monotonic() - last >= QUIET_S
            if idle and len(self.proxy.requests) == len(answered):  # none came meanwhile
                return
            time.sleep(POLL_S)
        raise TimeoutError("Orion's storage requests did not stop")

    def slack_call(self, since: float, matches: Callable[[Call], bool]) -> float | None:
        """When Slack answered the first call since `since` that `matches`, if one came."""
        return next((c.at for c in self.slack.calls if c.at >= since and matches(c)), None)

    @contextmanager
    def step(
        self, step: Step, seen: Moment, done: Moment, *, wait_s: float = TIMEOUT_S
    ) -> Iterator[None]:
        """Run the body (which posts the step's event) and wait (at most `wait_s`) until
        the person has seen everything (`done`), then for quiet. The step gets every
        storage request from the body's start until the next step starts (or `finish`),
        in the order they reached the bucket, each in its stage (`seen`, `done`: when the
        person saw the step's first and last part)."""
        self.finish()
        mark, began = len(self.proxy.requests), time.monotonic()
        yield
        deadline = time.monotonic() + wait_s
        while done(began) is None and time.monotonic() < deadline:
            time.sleep(POLL_S)
        self.quiet()
        self._open = _OpenStep(step, mark, began, time.monotonic(), seen, done)

    def finish(self) -> None:
        """Wait for quiet and close the last step with every request it caused: also
        those that came after a pause longer than QUIET_S (the step says so)."""
        self.quiet()
        if (open_step := self._open) is None:
            return
        self._open = None
        step = open_step.step
        seen_at, done_at = open_step.seen(open_step.began), open_step.done(open_step.began)
        if done_at is None:
            step.notes.append("the person saw nothing")
        proxied = [p for p in self.proxy.requests[open_step.mark :] if bucket_of(p) == self.bucket]
        if late := sum(1 for p in proxied if p.started >= open_step.quiet_at):
            step.notes.append(f"{late} after a pause over {QUIET_S:g} s")
        step.silence = longest_silence(proxied)
        made = sorted(map(storage_request, proxied), key=_started)
        step.requests = [
            Named(_stage(r.started, seen_at, done_at), r, self.names.readable(r.name)) for r in made
        ]


@dataclass(frozen=True)
class _OpenStep:
    """A step whose event was handled and whose requests are still being gathered."""

    step: Step
    mark: int  # how many requests the proxy had seen before it
    began: float
    quiet_at: float  # when it first went quiet
    seen: Moment
    done: Moment


def _started(request: StorageRequest) -> float:
    return request.started


def longest_silence(proxied: list[ProxiedRequest]) -> float:
    """The longest time with no request in flight between the first and the last of
    `proxied`: how long a step went quiet and still had more to send."""
    longest, busy_until = 0.0, None
    for request in sorted(proxied, key=lambda p: p.started):
        if busy_until is not None:
            longest = max(longest, request.started - busy_until)
        busy_until = max(busy_until or request.finished, request.finished)
    return longest


# --- what a person does --------------------------------------------------------------------


@dataclass(frozen=True)
class Person:
    user: str
    dm: str


def _unmeasured() -> Step:
    """An earlier step: run the same way, so that it is over before the next begins."""
    return Step("earlier", 0, START_STAGES)


def _thread_start(rig: Rig, person: Person, step: Step, label: str) -> str:
    """assistant_view: the person opens a thread and is greeted; the thread's ts."""
    ts = rig.slack.open_assistant_thread(person.dm)
    rig.names.add(ts, label)

    def greeted(since: float) -> float | None:
        return rig.slack_call(
            since,
            lambda c: (
                c.method == "chat.postMessage"
                and c.args.get("channel") == person.dm
                and c.args.get("thread_ts") == ts
            ),
        )

    with rig.step(step, greeted, greeted):
        rig.post(events.assistant_thread_started(person.user, person.dm, ts))
    return ts


def _tab_opened(rig: Rig, person: Person, step: Step) -> None:
    """agent_view: the person opens the Messages tab; its prompts greet them (at most once
    a day for what Orion knows of them: the step waits a little, not for ever)."""

    def greeted(since: float) -> float | None:
        return rig.slack_call(
            since,
            lambda c: (
                c.method == "assistant.threads.setSuggestedPrompts"
                and c.args.get("channel_id") == person.dm
                and not c.args.get("thread_ts")
            ),
        )

    with rig.step(step, greeted, greeted, wait_s=5.0):
        rig.post(events.app_home_opened(person.user, person.dm))


def _answered(rig: Rig, person: Person, thread_ts: str) -> Moment:
    """When the answer in the thread was finished: its stream stopped (or, unstreamed,
    its message posted after Claude was asked)."""

    def finished(since: float) -> float | None:
        asked = rig.claude.first_since(since)
        if asked is None:
            return None
        return rig.slack_call(
            asked,
            lambda c: (
                c.args.get("channel") == person.dm
                and (
                    c.method == "chat.stopStream"
                    or (c.method == "chat.postMessage" and c.args.get("thread_ts") == thread_ts)
                )
            ),
        )

    return finished


def _message(rig: Rig, person: Person, thread_ts: str, words: str, step: Step) -> None:
    """The person writes in a thread (either experience) and is answered."""
    ts = rig.slack.add_user_message(person.dm, thread_ts, person.user, words)
    rig.names.add(ts, "message")
    with rig.step(step, rig.claude.first_since, _answered(rig, person, thread_ts)):
        rig.post(events.user_message_in_thread(person.user, person.dm, thread_ts, words, ts))


def _new_conversation(rig: Rig, person: Person, words: str, step: Step, label: str) -> str:
    """agent_view: a top-level DM starts a conversation (keyed by its ts), answered."""
    ts = rig.slack.add_user_message(person.dm, None, person.user, words)
    rig.names.add(ts, label)
    with rig.step(step, rig.claude.first_since, _answered(rig, person, ts)):
        rig.post(events.top_level_dm(person.user, person.dm, words, ts))
    return ts


def _assistant_view(rig: Rig, person: Person, messages: int) -> list[Step]:
    for n, words in enumerate((FIRST_WORDS, LATER_WORDS), start=1):
        ts = _thread_start(rig, person, _unmeasured(), f"earlier thread {n}")
        _message(rig, person, ts, words, _unmeasured())
    start = Step("(a) assistant: thread start", START_GOAL, START_STAGES)
    steps = [start]
    ts = _thread_start(rig, person, start, "thread")
    for n, words in enumerate((QUESTION, FOLLOW_UP)[:messages]):
        which = "message" if n == 0 else "message 2"
        step = Step(f"(b) assistant: {which} + turn end", MESSAGE_GOAL, MESSAGE_STAGES)
        _message(rig, person, ts, words, step)
        steps.append(step)
    return steps


def _agent_view(rig: Rig, person: Person, messages: int) -> list[Step]:
    # The tab opened once before (by a stranger), then two conversations, the first of
    # which teaches Orion the person's name: the next opening greets them by it.
    _tab_opened(rig, person, _unmeasured())
    for n, words in enumerate((FIRST_WORDS, LATER_WORDS), start=1):
        _new_conversation(rig, person, words, _unmeasured(), f"earlier thread {n}")
    start = Step("(c) agent: Messages tab opened", START_GOAL, START_STAGES)
    _tab_opened(rig, person, start)
    first = Step("(c) agent: first DM + turn end", MESSAGE_GOAL, MESSAGE_STAGES)
    ts = _new_conversation(rig, person, QUESTION, first, "thread")
    steps = [start, first]
    if messages > 1:
        reply = Step("(c) agent: reply in it + turn end", MESSAGE_GOAL, MESSAGE_STAGES)
        _message(rig, person, ts, FOLLOW_UP, reply)
        steps.append(reply)
    return steps


# --- running it ----------------------------------------------------------------------------

EXPERIENCES = (("assistant", "AS", _assistant_view), ("agent", "AG", _agent_view))


def _spawn(
    experience: str, bucket: str, workdir: Path, proxy: FaultyProxy, slack: FakeSlack, url: str
) -> OrionProcess:
    """`orion serve` in `experience` on the proxied bucket, started (not yet ready)."""
    env = orion_env(
        slack_url=slack.url,
        claude_url=url,
        port=free_port(),
        STORAGE_EMULATOR_HOST=proxy.url,
        GCS_MEMORIES_BUCKET=bucket,
        SLACK_EXPERIENCE=experience,
        # The organisation's context is shared by every conversation on an instance (read
        # at most once per MEMORY_GLOBAL_CONTEXT_MAX_AGE_S, 10 s by default): kept warm
        # here, so that the steps count what each person's event asks of storage.
        MEMORY_GLOBAL_CONTEXT_MAX_AGE_S="3600",
    )
    orion = OrionProcess(env, cwd=workdir, log_path=workdir / f"orion-{experience}.log")
    orion.start()
    return orion


def _wait_ready(orion: OrionProcess) -> None:
    orion.wait_healthy(timeout=TIMEOUT_S)
    deadline = time.monotonic() + TIMEOUT_S
    while httpx.get(f"{orion.url}/readyz", timeout=5).status_code != 200:
        if time.monotonic() > deadline:
            raise TimeoutError(f"Orion not ready: {orion.log()[-2000:]}")
        time.sleep(0.05)


def measure(quick: bool) -> list[list[Step]]:
    """Each person's measured steps, the people of both experiences in turn. Both
    processes start at once (their start-up is most of a quick run); each has its own
    bucket, and each step counts the requests for its own."""
    people, messages = (1, 1) if quick else (3, 2)
    measured: list[list[Step]] = []
    with (
        GcsEmulator() as emulator,
        FaultyProxy(emulator.url) as proxy,
        FakeSlack() as slack,
        FakeClaude() as claude,
        tempfile.TemporaryDirectory() as tmp,
        ExitStack() as running,
    ):
        answers = AnswerRequests()
        claude.responder = answers
        started = []
        for experience, tag, scenario in EXPERIENCES:
            bucket = f"orion-bench-{uuid.uuid4().hex[:12]}"
            emulator.create_bucket(bucket)
            emulator.write(bucket, GLOBAL_CONTEXT_KEY, GLOBAL_CONTEXT)
            orion = _spawn(experience, bucket, Path(tmp), proxy, slack, claude.url)
            running.callback(orion.stop)
            started.append((orion, bucket, tag, scenario))
        for orion, bucket, tag, scenario in started:
            _wait_ready(orion)
            for n in range(people):
                person = Person(f"U0{tag}RET{n}", f"D0{tag}RET{n}")
                rig = Rig(orion.url, bucket, proxy, slack, answers)
                rig.names.add(person.user, "user")
                rig.names.add(person.dm, "dm")
                rig.names.add(TEAM_ID, "team")
                measured.append(scenario(rig, person, messages))
                rig.finish()
    return measured


# --- what it prints ------------------------------------------------------------------------


def _by_label(measured: list[list[Step]]) -> dict[str, list[Step]]:
    found: dict[str, list[Step]] = {}
    for steps in measured:
        for step in steps:
            found.setdefault(step.label, []).append(step)
    return found


def _spread(values: list[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}–{high}"


LABEL_WIDTH = 35
COLUMNS = ("goal", "reqs", "before", "during", "after", "reads", "writes", "lists", "twice")


def table(measured: list[list[Step]]) -> str:
    """One line per step (its figures over the people; a spread when they differ), then
    every request of the first person's steps, named."""
    people = len(measured) // len(EXPERIENCES)
    silence = max(step.silence for steps in measured for step in steps)
    lines = [
        f"Storage requests per step of a returning person, {people} per experience. A step "
        f"ends after {QUIET_S * 1000:.0f} ms",
        f"without a request; the longest pause inside one was {silence * 1000:.0f} ms.",
        f"{'step':{LABEL_WIDTH}}" + "".join(f"{c:>{len(c) + 1}}" for c in COLUMNS),
    ]
    for label, steps in _by_label(measured).items():
        figures = [
            f"≤ {steps[0].goal}",
            _spread([len(s.requests) for s in steps]),
            *(_spread([s.in_stage(stage) for s in steps]) for stage in (BEFORE, DURING, AFTER)),
            _spread([s.count(lambda r: r.reads) for s in steps]),
            _spread([s.count(lambda r: r.writes) for s in steps]),
            _spread([s.count(lambda r: r.kind == LIST) for s in steps]),
            _spread([len(s.twice) for s in steps]),
        ]
        verdict = "  FAILED" if any(s.over_goal for s in steps) else ""
        cells = "".join(f"{f:>{len(c) + 1}}" for c, f in zip(COLUMNS, figures, strict=True))
        lines.append(f"{label:{LABEL_WIDTH}}{cells}{verdict}")
    for step in measured[0] + measured[people]:
        lines += ["", *_named(step)]
    return "\n".join(lines)


def _named(step: Step) -> list[str]:
    again = repeated([named.request for named in step.requests])
    said = f"{len(step.requests)} requests, objects twice: {len(step.twice) or 'none'}"
    lines = [f"{step.label} ({'; '.join([said, *step.notes])})"]
    for n, named in enumerate(step.requests, start=1):
        how = _touch(named.request)
        mark = _answer(named.request.status) + (f"  {how[0]} twice" if how in again else "")
        stage = step.stages[named.stage]
        lines.append(f"{n:4}  {stage:15} {named.request.kind:18} {named.readable}{mark}")
    return lines


def _answer(status: int) -> str:
    """What the bucket answered, when it was not the object (or the write) asked for."""
    if status == 404:
        return "  (absent)"
    if status == 412:
        return "  (refused: changed meanwhile)"
    return f"  (HTTP {status})" if status >= 400 else ""


def rows(measured: list[list[Step]]) -> list[tuple[str, str]]:
    """bench.run's rows: one a step, its figures over the people."""
    found = []
    for label, steps in _by_label(measured).items():
        goal = f"goal ≤ {steps[0].goal}, no object twice"
        figures = ", ".join(
            _counted([predicate(s) for s in steps], what)
            for what, predicate in (
                ("read", lambda s: s.count(lambda r: r.reads)),
                ("write", lambda s: s.count(lambda r: r.writes)),
                ("list", lambda s: s.count(lambda r: r.kind == LIST)),
                ("object twice", lambda s: len(s.twice)),
            )
        )
        total = _spread([len(s.requests) for s in steps])
        verdict = " FAILED" if any(s.over_goal for s in steps) else ""
        found.append(
            (
                f"storage requests, returning person: {label} ({goal})",
                f"{total} ({figures}){verdict}",
            )
        )
    return found


def _counted(values: list[int], what: str) -> str:
    plural = what.replace("object", "objects") if "object" in what else what + "s"
    return f"{_spread(values)} {what if values == [1] * len(values) else plural}"


def run(quick: bool) -> list[tuple[str, str]]:
    measured = measure(quick)
    print(table(measured), file=sys.stderr)  # the names, beside bench.run's one table
    return rows(measured)


if __name__ == "__main__":
    print(table(measure(quick="--quick" in sys.argv)))
