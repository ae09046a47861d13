"""Hostile input: what one 40,000-character message of a pathological shape costs Orion.

A Slack message holds up to 40,000 characters; tens of thousands of Unicode spaces in a
row, nested brackets or repeated punctuation once made text handling quadratic, on the
event loop (a "call me …" padded with spaces froze an instance for minutes). The shapes are
those of tests/security/test_hostile_text.py: a run of each of the 30 whitespace characters
Python knows, a "call me … Sam" padded with each, zero-width characters, repeated
punctuation, nested brackets, one endless word, a space or tab between letters, sentence
after sentence, filler after filler, a password label and blanks, backticks, line after line.

(a) CPU for one message through a turn's text path: everything a turn does with the
    person's text, in order (agent_view's session title, the history sent to Claude,
    scrubbing Orion's secrets from what is logged and traced, secret shapes masked,
    preference detection, the summary's material, prompt and model-free fallback, the
    conversation's object — transcript and summary — as written through the secret-free
    store and read back). The answer is
    taken to echo the message (the worst a model can send back). Thread CPU time
    (`time.thread_time`), median and max of repeated runs per shape. Goal: ≤ 20 ms.
    Beside it, not in the goal: cutting that echoed answer into Slack messages, which only
    happens when streaming broke, and runs in a worker thread.
    "Before": the same path with preference detection and redaction as they were at
    BEFORE_REV (loaded from git into a temporary module), on a few shapes, each run once
    and stopped after a CPU budget.
(b) /healthz while 10 such messages (10 different shapes, 10 people, each in their own
    assistant thread) arrive at once: one real `orion serve` process (uvicorn, INFO JSON
    logs, memory in a local directory) on loopback against the fake Slack and Claude, which
    echoes each message (trimmed as Orion sends it) as a streamed answer. A separate prober
    process GETs /healthz every 5 ms (a new round trip each time, keep-alive) from before
    the messages are posted until every answer is finished in Slack, plus 0.5 s for the
    end-of-turn work. p50 / p99 / max of the probes in that window; the same with 10
    ordinary short messages for comparison. Goal: p99 ≤ 100 ms.

`uv run python -m bench.hostile_input [--quick]` runs it alone.
"""

from __future__ import annotations

import importlib.util
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import types
import unicodedata
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx

from app.agent.history import ThreadMessage, build_messages
from app.agent.summarizer import summary_prompt
from app.learning import preference_detection
from app.learning.conversation_record import ConversationOwner, ConversationRecord, said
from app.learning.plain_text import one_line
from app.learning.summary_file import Summary
from app.learning.transcript import (
    MAX_TRANSCRIPT_CHARS,
    conversation,
    conversation_chars,
    fallback_summary,
    newest_within,
)
from app.observability import redaction
from app.slack.conversation.answer_parts import split_markdown
from app.slack.conversation.presence import SESSION_TITLE_CHARS
from app.slack.conversation.reply_stream import MAX_MARKDOWN_CHARS
from bench.stats import median_ms, percentile_ms, print_table
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import REPO, OrionProcess, free_port, orion_env
from tests.orion_server import ANTHROPIC_KEY, BOT_TOKEN, SIGNING_SECRET

SLACK_LIMIT = 40_000
GOAL_CPU_MS = 20.0
GOAL_HEALTHZ_P99_MS = 100.0
CONCURRENT = 10
# The code before this work: preference detection and redaction as they were.
BEFORE_REV = "a66616650258"
BEFORE_MODULES = {
    "preference_detection": "app/learning/preference_detection.py",
    "redaction": "app/observability/redaction.py",
}
BEFORE_BUDGET_S = 10.0
QUICK_BEFORE_BUDGET_S = 2.0
USER = "U0HOSTILE"
CHANNEL, THREAD = "D0HOSTILE", "1712345678.000100"

WHITESPACE = "".join(
    sorted(
        {c for c in map(chr, range(sys.maxunicode + 1)) if unicodedata.category(c) == "Zs"}
        | set("\t\n\r\v\f\x1c\x1d\x1e\x1f\x85\u2028\u2029")
    )
)
LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
SPACES = "".join(c for c in WHITESPACE if c not in LINE_BREAKS)
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff"


def _filled(unit: str, length: int = SLACK_LIMIT) -> str:
    return (unit * (length // len(unit) + 1))[:length]


def _call_me(padding: str) -> str:
    return "call me" + _filled(padding, SLACK_LIMIT - len("call meSam")) + "Sam"


def _u(char: str) -> str:
    return f"U+{ord(char):04X}"


# Families of shapes (one per whitespace character) are reported by their worst member.
FAMILIES: dict[str, dict[str, str]] = {
    "a run of one whitespace character (each of 30)": {_u(c): _filled(c) for c in WHITESPACE},
    "'call me' + a run of one whitespace character + 'Sam' (each of 30)": {
        _u(c): _call_me(c) for c in WHITESPACE
    },
    "a run of one zero-width character (each of 5)": {_u(c): _filled(c) for c in ZERO_WIDTH},
}
SHAPES: dict[str, str] = {
    "every whitespace in turn": _filled(WHITESPACE),
    "'call me' + every space (no line break) in turn + 'Sam'": _call_me(SPACES),
    "zero-width characters in turn": _filled(ZERO_WIDTH),
    "'!?.' repeated": _filled("!?."),
    "'.,;' repeated": _filled(".,;"),
    "nested '('": _filled("("),
    "nested '['": _filled("["),
    "'![' repeated": _filled("!["),
    "one endless word": _filled("a"),
    "space, letter": _filled(" a"),
    "tab, letter": _filled("\ta"),
    "'Call me Sam. ' repeated": _filled("Call me Sam. "),
    "'call me Sam' + ', please' repeated": "call me Sam" + _filled(", please", SLACK_LIMIT - 11),
    "'password:' + blanks": "password:" + _filled(" \t", SLACK_LIMIT - 9),
    "backticks": _filled("`"),
    "'a' + line break, repeated": _filled("a\n"),
}
# Measured on the code before, and sent at once in (b).
BEFORE_SHAPES = [
    "'call me' + every space (no line break) in turn + 'Sam'",
    "'call me Sam' + ', please' repeated",
    "'password:' + blanks",
    "space, letter",
    "'Call me Sam. ' repeated",
    "nested '['",
    "one endless word",
]
CONCURRENT_SHAPES = [
    "'call me' + every space (no line break) in turn + 'Sam'",
    "every whitespace in turn",
    "'call me Sam' + ', please' repeated",
    "'password:' + blanks",
    "space, letter",
    "'Call me Sam. ' repeated",
    "nested '['",
    "'!?.' repeated",
    "zero-width characters in turn",
    "'a' + line break, repeated",
]
ORDINARY = [
    "What's on the agenda for Thursday's planning meeting?",
    "Can you summarise the Q3 budget discussion in three bullet points?",
    "Please call me Sam from now on.",
    "How do I rotate the staging database credentials?",
    "Draft a short note thanking the team for the launch.",
    "What did we decide about the vendor contracts last week?",
    "Explain the difference between a mutex and a semaphore.",
    "I prefer short answers with bullet points.",
    "Which regions does the heron cluster run in?",
    "Give me a checklist for onboarding a new engineer.",
]


# --- (a) CPU per message ---------------------------------------------------------------------


@dataclass(frozen=True)
class TextCode:
    """The two modules whose old versions are compared: detection and redaction."""

    detect: Callable[[str], object]
    redact: Callable[[object], object]
    redact_shapes: Callable[[str], str]
    register_secrets: Callable[[list[str]], None]


CURRENT = TextCode(
    preference_detection.detect_preferences,
    redaction.redact,
    redaction.redact_secret_shapes,
    redaction.register_secrets,
)
# What Orion registers at start-up: its own tokens and keys (values as in the tests).
ORION_SECRETS = [BOT_TOKEN, SIGNING_SECRET, ANTHROPIC_KEY]


def turn_text_path(text: str, code: TextCode = CURRENT) -> None:
    """Everything one turn does with the person's text, the answer echoing it."""
    one_line(text, SESSION_TITLE_CHARS)  # agent_view: the session's title
    messages = build_messages([ThreadMessage("user", text)])  # what Claude is sent
    code.redact({"messages": messages})  # log lines and trace input: Orion's own secrets
    code.redact_shapes(text)  # secret shapes masked (traces, and every memory write)
    code.detect(text)  # preferences said in passing
    exchange = [ThreadMessage("user", text), ThreadMessage("assistant", text)]
    material = newest_within(conversation(exchange), MAX_TRANSCRIPT_CHARS)
    conversation_chars(material)
    summary_prompt(None, material)  # the summary model's prompt
    draft = fallback_summary(None, material)  # the summary when the model fails
    now = datetime.now(UTC)
    record = ConversationRecord(THREAD, ConversationOwner(USER, CHANNEL), now).with_messages(
        [said("user", text, at=now), said("assistant", text, at=now)]  # secrets redacted
    )
    kept = record.with_summary(Summary(draft.title, draft.body, now)).render()
    written = code.redact_shapes(kept)  # through the secret-free store
    ConversationRecord.parse(written)  # read back at the next turn, or by recall


def cut_answer(text: str) -> None:
    """The echoed answer cut into Slack messages (only when streaming broke)."""
    split_markdown(text, MAX_MARKDOWN_CHARS)


def _cpu_seconds(work: Callable[[str], None], text: str, runs: int) -> list[float]:
    seconds = []
    for _ in range(runs):
        started = time.thread_time()
        work(text)
        seconds.append(time.thread_time() - started)
    return seconds


def _cpu_rows(label: str, work: Callable[[str], None], runs: int) -> list[tuple[str, str]]:
    rows = []
    worst: tuple[float, str] = (0.0, "")
    for family, members in FAMILIES.items():
        measured = {name: _cpu_seconds(work, text, runs) for name, text in members.items()}
        name, seconds = max(measured.items(), key=lambda item: max(item[1]))
        worst = max(worst, (max(seconds), f"{family}: {name}"))
        rows.append(
            (
                f"{label}: {family}, worst ({name}), median / max of {runs}",
                f"{median_ms(seconds)} / {max(seconds) * 1000:.1f} ms",
            )
        )
    for name, text in SHAPES.items():
        seconds = _cpu_seconds(work, text, runs)
        worst = max(worst, (max(seconds), name))
        rows.append(
            (
                f"{label}: {name}, median / max of {runs}",
                f"{median_ms(seconds)} / {max(seconds) * 1000:.1f} ms",
            )
        )
    return [
        (f"{label}: worst of all shapes (max)", f"{worst[0] * 1000:.1f} ms ({worst[1]})"),
        *rows,
    ]


def _old_module(name: str, path: str, rev: str = BEFORE_REV) -> types.ModuleType | None:
    """The module at `rev`, imported under a private name; None without git."""
    try:
        source = subprocess.run(
            ["git", "show", f"{rev}:{path}"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as file:
        file.write(source)
    module_name = f"_before_{name}"
    spec = importlib.util.spec_from_file_location(module_name, file.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses look their module up while defined
    spec.loader.exec_module(module)
    Path(file.name).unlink()
    return module


class _OverBudget(Exception):
    pass


def _before_rows(quick: bool) -> list[tuple[str, str]]:
    detection = _old_module("preference_detection", BEFORE_MODULES["preference_detection"])
    old_redaction = _old_module("redaction", BEFORE_MODULES["redaction"])
    if detection is None or old_redaction is None:
        return [("hostile text, before: not measured", f"git show {BEFORE_REV} failed")]
    old = TextCode(
        detection.detect_preferences,
        old_redaction.redact,
        old_redaction.redact_secret_shapes,
        old_redaction.register_secrets,
    )
    old.register_secrets(ORION_SECRETS)
    budget = QUICK_BEFORE_BUDGET_S if quick else BEFORE_BUDGET_S

    def over_budget(*_: object) -> None:
        raise _OverBudget

    # The regex engine checks for signals while it works: a CPU timer stops a run.
    previous = signal.signal(signal.SIGPROF, over_budget)
    rows = []
    try:
        for name in BEFORE_SHAPES:
            started = time.thread_time()
            signal.setitimer(signal.ITIMER_PROF, budget)
            try:
                turn_text_path(SHAPES[name], old)
                signal.setitimer(signal.ITIMER_PROF, 0)
                shown = f"{(time.thread_time() - started) * 1000:.1f} ms"
            except _OverBudget:
                shown = f"> {budget:g} s (stopped)"
            after = min(_cpu_seconds(turn_text_path, SHAPES[name], 3))
            rows.append(
                (
                    f"hostile text (a), before ({BEFORE_REV}) → after, one run: {name}",
                    f"{shown} → {after * 1000:.1f} ms",
                )
            )
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
    return rows


# --- (b) /healthz while hostile messages arrive ----------------------------------------------

# Probes /healthz in its own process (the fakes' threads in this one would otherwise delay
# the prober, not Orion): one line per probe, "<wall-clock start> <seconds> <status>", once
# its standard input closes.
PROBE = """
import sys, threading, time
import httpx
url, every = sys.argv[1], float(sys.argv[2])
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
probes = []
with httpx.Client(timeout=30) as client:
    while not stop.is_set():
        began, started = time.time(), time.perf_counter()
        status = client.get(url).status_code
        probes.append(f"{began:.6f} {time.perf_counter() - started:.6f} {status}")
        time.sleep(every)
print("\\n".join(probes))
"""
PROBE_EVERY_S = 0.005
TAIL_S = 0.5


@dataclass(frozen=True)
class Round:
    healthz: list[float]  # seconds, probes inside the window
    failed_probes: int
    answered: int
    seconds: float  # first post → last answer finished


def _round(orion: OrionProcess, slack: FakeSlack, texts: list[str], tag: str) -> Round:
    prober = subprocess.Popen(
        [sys.executable, "-c", PROBE, f"{orion.url}/healthz", str(PROBE_EVERY_S)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.0)  # the prober imports httpx and starts probing
    threads = []
    payloads = []
    for n, text in enumerate(texts):
        user, channel = f"U0{tag}{n:02d}", f"D0{tag}{n:02d}"
        thread_ts = slack.open_assistant_thread(channel)
        ts = slack.add_user_message(channel, thread_ts, user, text)
        threads.append((channel, thread_ts))
        payloads.append(events.user_message_in_thread(user, channel, thread_ts, text, ts=ts))

    def post(payload: dict[str, object]) -> int:
        body = events.json_body(payload)
        headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
        url = f"{orion.url}/slack/events"
        return httpx.post(url, content=body, headers=headers, timeout=30).status_code

    began = time.time()
    with ThreadPoolExecutor(len(payloads)) as pool:
        statuses = list(pool.map(post, payloads))
    assert all(status == 200 for status in statuses), statuses

    def finished() -> int:
        return sum(
            any(not m.streaming for m in slack.bot_messages(channel, thread_ts))
            for channel, thread_ts in threads
        )

    with suppress(TimeoutError):  # reported as fewer answers
        slack.wait_for(lambda: finished() == len(threads), timeout=120, what="every answer")
    done = time.time()
    time.sleep(TAIL_S)
    output, _ = prober.communicate(input="", timeout=60)
    probes = [line.split() for line in output.splitlines() if line.strip()]
    inside = [p for p in probes if began <= float(p[0]) <= done + TAIL_S]
    return Round(
        healthz=[float(p[1]) for p in inside if p[2] == "200"],
        failed_probes=sum(p[2] != "200" for p in inside),
        answered=finished(),
        seconds=done - began,
    )


def _healthz_rows(label: str, rounds: list[Round]) -> list[tuple[str, str]]:
    probes = [s for r in rounds for s in r.healthz]
    answered = sum(r.answered for r in rounds)
    expected = CONCURRENT * len(rounds)
    return [
        (
            f"{label}: /healthz p50 / p99 / max of {len(probes)} probes, {len(rounds)} rounds"
            + (f" (goal p99 ≤ {GOAL_HEALTHZ_P99_MS:g} ms)" if "hostile messages" in label else ""),
            f"{percentile_ms(probes, 50)} / {percentile_ms(probes, 99)} / "
            f"{max(probes) * 1000:.1f} ms",
        ),
        (
            f"{label}: answers finished, median time from posting to the last",
            f"{answered}/{expected}, {statistics.median(r.seconds for r in rounds):.2f} s"
            + (
                f", {sum(r.failed_probes for r in rounds)} failed probes"
                if any(r.failed_probes for r in rounds)
                else ""
            ),
        ),
    ]


def _concurrent_rows(quick: bool) -> list[tuple[str, str]]:
    rounds = 1 if quick else 3
    hostile = [SHAPES[name] for name in CONCURRENT_SHAPES]
    # With nothing scripted, the fake Claude echoes each message (as Orion sent it).
    with FakeSlack() as slack, FakeClaude() as claude, tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        env = orion_env(slack_url=slack.url, claude_url=claude.url, port=free_port())
        with OrionProcess(env, cwd=workdir, log_path=workdir / "orion.log") as orion:
            _round(orion, slack, ORDINARY, "WARM")  # builds the services, imports all
            ordinary = [_round(orion, slack, ORDINARY, f"OK{n}") for n in range(rounds)]
            attacked = [_round(orion, slack, hostile, f"HX{n}") for n in range(rounds)]
    return [
        *_healthz_rows(f"hostile text (b), {CONCURRENT} ordinary messages at once", ordinary),
        *_healthz_rows(f"hostile text (b), {CONCURRENT} hostile messages at once", attacked),
    ]


def run(quick: bool) -> list[tuple[str, str]]:
    runs = 3 if quick else 15
    CURRENT.register_secrets(ORION_SECRETS)
    try:
        rows = _cpu_rows("hostile text (a), a turn's text path", turn_text_path, runs)
        rows += _before_rows(quick)
        label = "hostile text (a), not in the goal: the echoed answer cut into messages"
        rows += _cpu_rows(label, cut_answer, 3)[:1]
    finally:
        CURRENT.register_secrets([])
    rows.insert(
        1, ("hostile text: goal for the turn's text path", f"≤ {GOAL_CPU_MS:g} ms per message")
    )
    return rows + _concurrent_rows(quick)


if __name__ == "__main__":
    print_table(run("--quick" in sys.argv))
