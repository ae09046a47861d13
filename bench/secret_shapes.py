"""Secret redaction: the CPU one 40,000-character text costs, at its worst and as usual.

Everything Orion keeps or traces passes through `redact_secret_shapes` (memory writes,
memory file names, Langfuse's mask), so a person's message of Slack's maximum length is
scrubbed at least once per turn. Measured in this process, single-threaded, with
`time.perf_counter`; each input is scrubbed several times and its median kept:

- adversarial inputs: every anchor of every shape followed by 40,000 characters of each
  character that could make a pattern backtrack (white space, key characters, separators,
  quotes, invisible characters), alone or repeated; every anchor glued to itself by a
  separator, ending in `(` (`password=password=…(`: 680 ms before the anchors could be
  glued); runs of every Unicode space; nested brackets; repeated punctuation; one
  endless word. Reported: the median, p95, p99 and
  the worst of the per-input medians, and which input was worst;
- ordinary prose without secrets (the common case), and the same prose with secrets;
- Langfuse's mask over one Claude request as Orion traces it: a 2,000-character
  remembered context, 20 earlier messages of 2,000 characters, and a 40,000-character
  message.

- a large write through the secret-free store (a 4 MB search index, as a turn's end
  writes it): the longest the event loop waits meanwhile, with the store's worker thread
  and with redaction on the loop (as before it), and the redaction's own time.

Run alone with `uv run python -m bench.secret_shapes [--quick]`.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from app.memory import secret_free_store
from app.memory.secret_free_store import SecretFreeStore
from app.observability.redaction import redact_everything, redact_secret_shapes
from app.observability.secret_shapes import SECRET_SHAPES
from app.storage.local_directory import LocalDirectoryStore
from bench.stats import median_ms, percentile_ms, print_table

LENGTH = 40_000
FILLERS = (
    *(" ", "\t", "\n", "\u3000", "\u00a0", "\u200b", "\u2060"),
    *("a", "A", "0", "A0", "-", "_", ".", "=", ":", "/", "@", "%", "+", "&"),
    *('"', "'", "*", "\\", "\\n", "(", "[", "{", "!", "&amp;", "&lt;", "4", "1 "),
)
# What glues a secret to the word before it, or a label to its value.
GLUE = ("-", "_", "=", ":")
EXTRA_ANCHORS = (
    *("-----BEGIN RSA PRIVATE KEY-----", "-----END PRIVATE KEY-----", "BEGIN", "PRIVATE KEY"),
    *("password: ", "password=", '"password": "', "https://u:", "://", "Bearer ", "Basic "),
    *("AccountKey=", "&sig=", "hooks.slack.com/services/", "xoxb-", "ghp_", "glpat-"),
    *("my password is ", "the password for the ", "パスワードは", "PIN ", "my PIN is "),
    *("4111 ", "4111-1111-", "3782 822463 ", "login bob password ", "WIFI:", "--password "),
    *("-u bob:", "seed phrase is ", "xoxd-", "ya29.", "key-", "password: $"),
)
# Every space separator (Unicode category Zs).
UNICODE_SPACES = " \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000"
PROSE = (
    "We compared the Q2 and Q3 cloud spend by region; most of the overrun comes from "
    "europe-west1, where nightly batch jobs doubled in July. Finance wants an answer by "
    "Friday, so let's draft the summary tomorrow morning and review it with Dana. "
)
SECRETS = (
    "Here is the staging token xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOp and the "
    "database postgres://app:s3cr3t@db.internal/app, password: hunter2. "
)


def _fill(text: str) -> str:
    return (text * (LENGTH // max(1, len(text)) + 1))[:LENGTH]


def adversarial_inputs() -> dict[str, str]:
    anchors = sorted({anchor for shape in SECRET_SHAPES for anchor in shape.anchors})
    inputs: dict[str, str] = {}
    for anchor in (*anchors, *EXTRA_ANCHORS):
        inputs[f"{anchor!r} repeated"] = _fill(anchor)
        for filler in FILLERS:
            inputs[f"{anchor!r} + {filler!r} run"] = (anchor + filler * LENGTH)[:LENGTH]
            inputs[f"({anchor!r} + {filler!r}) repeated"] = _fill(anchor + filler)
            inputs[f"({anchor!r} + {filler!r} x3) repeated"] = _fill(anchor + filler * 3)
        for glue in GLUE:
            # Anchors glued into one long word that something at its end makes fail.
            inputs[f"({anchor!r} + {glue!r}) repeated, then '('"] = _fill(anchor + glue)[:-1] + "("
    for space in UNICODE_SPACES:
        inputs[f"password:{space!r} run"] = ("password:" + space * LENGTH)[:LENGTH]
    inputs["every Unicode space"] = _fill(UNICODE_SPACES)
    inputs["nested brackets"] = "[{(" * (LENGTH // 6) + ")}]" * (LENGTH // 6)
    inputs["repeated punctuation"] = _fill("!?.,;:-_=+*/\\|")
    inputs["one endless word"] = _fill("abcdefghij0123456789")
    return inputs


def _samples(function: Callable[[], object], count: int) -> list[float]:
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return samples


def _median_s(function: Callable[[], object], repeat: int) -> float:
    return statistics.median(_samples(function, repeat))


def _generation_input() -> dict[str, object]:
    """One Claude request as Orion hands it to Langfuse (agent.claude's input)."""
    memory = _fill(PROSE)[:2_000]
    system = [{"type": "text", "text": "You are Orion."}, {"type": "text", "text": memory}]
    earlier = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": _fill(PROSE)[:2_000]}
        for n in range(20)
    ]
    message = {"role": "user", "content": _fill(PROSE + SECRETS)}
    return {"system": system, "messages": [*earlier, message]}


def _search_index(size: int) -> str:
    """A search index's JSON of about `size` characters: per thread, a title and counts."""
    words = PROSE.lower().replace(",", "").replace(".", "").split()
    threads = []
    while sum(len(t) for t in threads) < size:
        n = len(threads)
        terms = {f"{word}{n % 97}": n % 7 + 1 for word in words}
        title = f"Cloud spend {n} ({1712345678 + n * 3600})"
        threads.append(
            json.dumps({"thread": f"1712345678.{n:06d}", "title": title, "terms": terms})
        )
    return "[" + ",".join(threads) + "]"


async def _longest_wait(content: str, *, on_loop: bool) -> tuple[float, float]:
    """The event loop's longest wait while the store writes `content`, and the write's
    time; `on_loop`: redaction on the loop, as before large writes had a worker thread."""
    secret_free_store.OFF_LOOP_CHARS = 10**12 if on_loop else 40_000
    waits: list[float] = []
    writing = True

    async def tick() -> None:
        last = time.perf_counter()
        while writing:
            await asyncio.sleep(0)
            now = time.perf_counter()
            waits.append(now - last)
            last = now

    with tempfile.TemporaryDirectory() as directory:
        store = SecretFreeStore(LocalDirectoryStore(Path(directory)))
        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0)
        started = time.perf_counter()
        await store.write("people/U1/search.json", content)
        took = time.perf_counter() - started
        writing = False
        await ticker
    secret_free_store.OFF_LOOP_CHARS = 40_000
    return max(waits), took


def _loop_rows(repeat: int) -> list[tuple[str, str]]:
    index = _search_index(4_000_000)
    rows = []
    for on_loop in (False, True):
        results = [asyncio.run(_longest_wait(index, on_loop=on_loop)) for _ in range(repeat)]
        wait = statistics.median(r[0] for r in results)
        took = statistics.median(r[1] for r in results)
        where = "redaction on the loop (before)" if on_loop else "redaction on a worker thread"
        rows.append(
            (
                f"a {len(index) / 1e6:.1f} MB search index written, {where}: the loop's longest "
                f"wait / the write, ms (median of {repeat})",
                f"{round(wait * 1000, 1)} / {round(took * 1000, 1)}",
            )
        )
    return rows


def run(quick: bool) -> list[tuple[str, str]]:
    repeat = 3 if quick else 7
    inputs = adversarial_inputs()
    medians = {
        name: _median_s(lambda t=text: redact_secret_shapes(t), repeat)
        for name, text in inputs.items()
    }
    per_input = list(medians.values())
    worst = max(medians, key=medians.__getitem__)
    count = 20 if quick else 100
    prose = _samples(lambda: redact_secret_shapes(_fill(PROSE)), count)
    with_secrets = _samples(lambda: redact_secret_shapes(_fill(PROSE + SECRETS)), count)
    request = _generation_input()
    masked = _samples(lambda: redact_everything(request), count)
    n = len(per_input)
    return [
        (
            f"redaction, {n} adversarial 40,000-char inputs: median / p95 / p99 / worst ms "
            f"(per input, median of {repeat})",
            f"{median_ms(per_input)} / {percentile_ms(per_input, 95)} / "
            f"{percentile_ms(per_input, 99)} / {round(max(per_input) * 1000, 1)}",
        ),
        ("redaction, worst adversarial input", worst[:80]),
        (
            f"redaction, 40,000 chars of prose, no secret: median / p99 ms (n={count})",
            f"{median_ms(prose)} / {percentile_ms(prose, 99)}",
        ),
        (
            f"redaction, 40,000 chars of prose with secrets: median / p99 ms (n={count})",
            f"{median_ms(with_secrets)} / {percentile_ms(with_secrets, 99)}",
        ),
        (
            f"Langfuse mask, one traced Claude request (82,000 chars): median / p99 ms (n={count})",
            f"{median_ms(masked)} / {percentile_ms(masked, 99)}",
        ),
        *_loop_rows(3 if quick else 5),
    ]


if __name__ == "__main__":
    print_table(run(quick="--quick" in sys.argv))
