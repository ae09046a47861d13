"""`recall` on the second frozen set (bench/recall_passages_data.py, issue 45): does what
the tool returns hold the answer, not only the right conversation?

Each question goes to the `recall` tool as Claude would send it (app/learning/recall.py
`RecallTool.call`), through the real store — GcsObjectStore against the GCS emulator —,
each person's conversations seeded in their home as turn ends write them (each
conversation's object with its transcript and summary, the profile, the search index).
Measured on what the tool returns:

- conversation-level recall@1/3/5, "all" (every evidence conversation in the first k
  search results) and "any" (one of them);
- message-level recall: "every" evidence message's answer is inside the returned
  passages of its conversation, or "any" one is;
- the characters returned, CPU per search (`time.process_time()`, the storage client's
  work included) and storage reads per search.

Rows: the question as one query; dated questions with their month as `after`/`before`
(as Claude passes a month it reads in a question); spanning questions as their parts
(one call with every part where the tool takes several queries, else one call per
part, their results together); each question as Claude called the tool for it, replayed
from bench/data/recall_passages_calls.json (its `about` says how the calls were written:
by Claude, from the tool's definition and the question alone; for two samples also the
turn's second call, where Claude read no answer in the first's result); and a plain
library BM25 (bm25s) over the same text for the conversation level. Every call is made
in the turn answering the question, so the tool also searches the person's message,
as in a turn.

Message-level recall is also broken down by kind and language, with why each missed
evidence message was lost (`CAUSES`: its conversation matched no word of the question,
or ranked below the first five, or was returned without the answer in the exchanges
around its matching messages, or with it there but cut by the conversation's room). Each
search is the first of a turn — a tool on the turn's own store (its erasure guard's), as
a turn opens it — after a turn end on another instance rewrote the index (nothing an
earlier search or turn end here kept is reused). Then the first person of each language
again, with 2,000 conversations (bench.recall_hard's long history added): recall, and
CPU per search at the size the issue's goal names — the first search of a turn (the
turn end before it on another instance, and on this one), and the turn's next search
(which shows the conversations the one before showed without reading them again while
the index names them by the same entry: app/learning/recall.py). The GCS emulator sends an
unchanged index whole where GCS answers 304 (it ignores `ifGenerationNotMatch` on
downloads): what a search here is spared of a kept index is its parsing, not its
transfer.

Run alone with `uv run python -m bench.recall_passages`; bench.recall_hard includes it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import statistics
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

from app.learning import recall, search_index
from app.learning.guard import Guard
from app.learning.passages import passages
from app.learning.recall import RecallTool
from app.learning.search_index import SearchIndex, document_for, record_search_document
from app.learning.search_ranking import rank
from app.learning.search_terms import query_terms
from app.memory import secret_free_store
from app.memory.homes import person as home_of
from app.memory.retention import SessionRetention
from app.memory.scopes import MemoryScope
from app.storage.gcs import GcsObjectStore
from bench.environment import benchmark_environment
from bench.recall_hard import CHANNEL, RETENTION_DAYS, CountingStore, _bm25_search, _seed
from bench.recall_hard_data import Conversation, Message, Person, long_history
from bench.recall_passages_data import load
from bench.stats import percentile_ms, print_table
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator

K = 5
# The calls Claude wrote for the set's questions (how they were written: the file's `about`).
CALLS = Path(__file__).parent / "data" / "recall_passages_calls.json"
# The turn the tool is called from: a thread of none of the seeded conversations.
CURRENT_THREAD = "1800000000.000001"
_THREAD_OF = re.compile(r"conversation (\d+\.\d+)\)$")
KINDS = ["all questions", "reply", "paraphrase", "span", "before_after", "date", "date_ahead"]


@dataclass(frozen=True)
class Evidence:
    thread: str
    ts: str
    answer: str


@dataclass(frozen=True)
class Asked:
    kind: str
    text: str
    parts: list[str]
    evidence: list[Evidence]
    month: tuple[int, int] | None

    @property
    def threads(self) -> set[str]:
        return {e.thread for e in self.evidence}


@dataclass
class Figures:
    counts: dict[str, int] = field(default_factory=dict)
    hits: dict[tuple[str, str], int] = field(default_factory=dict)
    cpu: list[float] = field(default_factory=list)
    reads: list[int] = field(default_factory=list)
    chars: list[int] = field(default_factory=list)
    # Evidence messages not shown, by kind: their conversation not returned ("not found"),
    # or returned without the answer in its passages ("not shown").
    lost: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(
        self,
        asked: Asked,
        found: list[str],
        shown: dict[str, str],
        cpu: float = 0.0,
        reads: int = 0,
        chars: int = 0,
        language: str = "",
        causes: Causes | None = None,
    ) -> None:
        evidence = asked.threads
        inside = [e.answer in shown.get(e.thread, "") for e in asked.evidence]
        marks = {
            **{f"conv all@{k}": evidence <= set(found[:k]) for k in (1, 3, 5)},
            **{f"conv any@{k}": bool(evidence & set(found[:k])) for k in (1, 3, 5)},
            "msg every": all(inside),
            "msg any": any(inside),
        }
        for kind in ("all questions", asked.kind, f"{asked.kind}|{language}", f"all|{language}"):
            self.counts[kind] = self.counts.get(kind, 0) + 1
            for mark, hit in marks.items():
                self.hits[(kind, mark)] = self.hits.get((kind, mark), 0) + hit
        for e, held in zip(asked.evidence, inside, strict=True):
            if not held:
                if causes is not None:
                    why = causes.why(asked, e, returned=e.thread in found[:K])
                else:
                    why = "not shown" if e.thread in found[:K] else "not found"
                self.lost[(asked.kind, why)] = self.lost.get((asked.kind, why), 0) + 1
        self.cpu.append(cpu)
        self.reads.append(reads)
        self.chars.append(chars)

    def breakdown(self, label: str) -> list[tuple[str, str]]:
        """Message-level recall (every evidence message) per kind and language, and where
        the evidence messages not returned were lost."""
        languages = sorted({kind.split("|")[1] for kind in self.counts if "|" in kind})
        rows = []
        for kind in [*KINDS[1:], "all"]:
            per = [
                f"{language} {self.rate(f'{kind}|{language}', 'msg every')}"
                for language in languages
                if f"{kind}|{language}" in self.counts
            ]
            if per:
                rows.append((f"{label}, {kind}: message every, by language", ", ".join(per)))
        for kind in KINDS[1:]:
            if kind in self.counts:
                rows.append(
                    (
                        f"{label}, {kind}: evidence messages missed, by cause ("
                        + " / ".join(CAUSES)
                        + ")",
                        " / ".join(str(self.lost.get((kind, cause), 0)) for cause in CAUSES),
                    )
                )
        return rows

    def rate(self, kind: str, mark: str) -> str:
        return f"{self.hits.get((kind, mark), 0) / self.counts[kind]:.2f}"

    def rows(self, label: str, *, messages: bool = True) -> list[tuple[str, str]]:
        rows = []
        for kind in KINDS:
            if kind not in self.counts:
                continue
            conv = " / ".join(
                f"{self.rate(kind, f'conv all@{k}')}, {self.rate(kind, f'conv any@{k}')}"
                for k in (1, 3, 5)
            )
            name = f"{label}, {kind} ({self.counts[kind]})"
            if messages:
                value = f"{conv}; {self.rate(kind, 'msg every')}, {self.rate(kind, 'msg any')}"
                rows.append((f"{name}: recall@1 / @3 / @5 (all, any); message (every, any)", value))
            else:
                rows.append((f"{name}: recall@1 / @3 / @5 (all, any)", conv))
        return rows

    def cost_row(self, label: str) -> tuple[str, str]:
        return (
            f"{label}: CPU per search p50 / p95 ms; storage reads median / max; "
            "characters returned median / max",
            f"{percentile_ms(self.cpu, 50)} / {percentile_ms(self.cpu, 95)}; "
            f"{statistics.median(self.reads):.0f} / {max(self.reads)}; "
            f"{statistics.median(self.chars):.0f} / {max(self.chars)}",
        )


# Why an evidence message was not in what the tool returned: its conversation holds no
# word of the question; or holds some but ranked below the first K (6–10, or further);
# or was returned, and the answer is in none of the exchanges around the messages with
# the question's words (the window), or is, but the conversation's room cut it.
CAUSES = (
    "no word matched",
    "ranked 6-10",
    "ranked beyond 10",
    "outside the window",
    "cut by the budget",
)


class Causes:
    """Tells why an evidence message was missed, from the same index and passages the
    tool uses (app/learning/search_ranking.py, app/learning/passages.py), in memory."""

    def __init__(self, person: Person) -> None:
        self.conversations = {c.thread_ts: c for c in person.conversations}
        self.index = SearchIndex(complete=True)
        self.index.add(
            document_for(c.thread_ts, c.title, c.summary, c.messages, c.updated, c.started)
            for c in person.conversations
        )

    def why(self, asked: Asked, evidence: Evidence, *, returned: bool) -> str:
        asked_terms = query_terms(asked.text)
        if not returned:
            ranking = rank(self.index, asked_terms, len(self.index))
            order = [r.thread_ts for r in ranking]
            if evidence.thread not in order:
                return CAUSES[0]
            return CAUSES[1] if order.index(evidence.thread) < 2 * K else CAUSES[2]
        messages = self.conversations[evidence.thread].messages
        unbounded = passages(messages, asked_terms, room=10**9)
        return (
            CAUSES[3] if evidence.answer not in "\n".join(p.text for p in unbounded) else CAUSES[4]
        )


def people() -> list[tuple[Person, list[Asked]]]:
    """The frozen set as the bench's people (for seeding) and their questions."""
    loaded = []
    for data in load()["people"]:
        conversations = []
        for c in data["conversations"]:
            conversation = Conversation(c["thread_ts"], c["title"], c["summary"])
            conversation.messages = [
                Message(m["role"], m["text"], datetime.fromisoformat(m["at"]), m["ts"])
                for m in c["messages"]
            ]
            conversations.append(conversation)
        asked = [
            Asked(
                q["kind"],
                q["text"],
                q["parts"],
                [Evidence(e["thread"], e["ts"], e["answer"]) for e in q["evidence"]],
                tuple(q["month"]) if q["month"] else None,
            )
            for q in data["questions"]
        ]
        loaded.append((Person(data["user_id"], data["language"], conversations, []), asked))
    return loaded


def _day(seconds: int, *, last: bool = False) -> str:
    day = datetime.fromtimestamp(seconds, UTC).date()
    return (day - timedelta(days=1) if last else day).isoformat()


def _read(result: str | list[dict[str, Any]]) -> tuple[list[str], dict[str, str], int]:
    """The threads of the search results, best first; each one's passages; the characters
    returned."""
    if isinstance(result, str):
        return [], {}, len(result)
    found, shown, chars = [], {}, 0
    for block in result:
        if block["type"] == "text":
            chars += len(block["text"])
            continue
        match = _THREAD_OF.search(block["title"])
        assert match is not None, block["title"]
        thread = match.group(1)
        text = "\n".join(part["text"] for part in block["content"])
        chars += len(text) + len(block["title"])
        if thread not in shown:
            found.append(thread)
        shown[thread] = shown.get(thread, "") + "\n" + text
    return found, shown, chars


def takes_several_queries() -> bool:
    schema = recall.recall_tool_param("")["input_schema"]
    return "queries" in schema["properties"]


async def _turn(store: CountingStore, user: str, message: str = "") -> RecallTool:
    """A turn's `recall` tool, on the turn's own store (its erasure guard's), as a turn
    opens it (app/agent/turn.py): what a turn's searches keep lasts the turn; `message`:
    what the person wrote, which the tool searches beside the call's queries."""
    guard = await Guard.reading(store, home_of(user))
    return RecallTool(guard.store, MemoryScope(user, CURRENT_THREAD), message=message)


async def _call(
    store: CountingStore,
    user: str,
    tool_input: dict[str, Any],
    *,
    message: str = "",
    turn: RecallTool | None = None,
    index_kept: bool = False,
) -> tuple[list[str], dict[str, str], float, int, int]:
    """One tool call in the turn answering `message`: `turn`'s next search, else the first
    of a new turn. `index_kept`:
    the index this instance last parsed or wrote is still the stored one (a turn end or
    a search here); else another instance's turn end rewrote it: downloaded and parsed."""
    if not index_kept:
        search_index._parsed_kept.clear()
    tool = turn or await _turn(store, user, message)
    reads, started = store.reads, time.process_time()
    result = await tool.call(tool_input)
    cpu, read = time.process_time() - started, store.reads - reads
    found, shown, chars = _read(result)
    return found, shown, cpu, read, chars


def query_input(text: str) -> dict[str, Any]:
    return {"queries": [text]} if takes_several_queries() else {"query": text}


async def measure(
    store: CountingStore, emulator: GcsEmulator, bucket: str
) -> list[tuple[str, str]]:
    loaded = people()
    for person, _ in loaded:
        _seed(emulator, bucket, person)
    figures = {name: Figures() for name in ("question", "month as a range", "parts", "bm25s")}
    await _ask(store, loaded, figures, bm25=True)
    written = claude_calls()
    for sample, calls in written.items():
        figures[sample] = Figures()
        await _as_written(store, list(enumerate(loaded)), calls, figures[sample])
    people_count = len(loaded)
    conversations = sum(len(p.conversations) for p, _ in loaded)
    label = f"passages set ({people_count} people, {conversations} conversations)"
    rows = figures["question"].rows(f"{label}, the question")
    rows += figures["month as a range"].rows(f"{label}, its month as after/before")
    rows += figures["parts"].rows(f"{label}, as its parts")
    rows += figures["bm25s"].rows(f"{label}, bm25s", messages=False)
    for sample in written:
        rows += figures[sample].rows(f"{label}, as Claude called it ({sample})")
        rows.append(figures[sample].cost_row(f"{label}, as Claude called it ({sample})"))
    for sample, then in claude_calls("second").items():
        both = Figures()
        await _as_written(store, list(enumerate(loaded)), written[sample], both, then)
        called = sum(call is not None for call in then.values())
        rows += both.rows(
            f"{label}, as Claude called it ({sample}) and again where it read no answer "
            f"({called} second calls)"
        )
    rows += figures["question"].breakdown(f"{label}, the question")
    rows.append(figures["question"].cost_row(f"{label}, the question"))
    rows.append(figures["parts"].cost_row(f"{label}, as its parts"))
    rows += await _long(store, emulator, bucket, loaded)
    return rows


async def _ask(
    store: CountingStore,
    loaded: list[tuple[Person, list[Asked]]],
    figures: dict[str, Figures],
    *,
    bm25: bool = False,
) -> None:
    """Every question of `loaded` as Claude would call the tool: the question; its month
    as a range; a spanning question's parts; and bm25s's ranking (`bm25`)."""
    for person, questions in loaded:
        plain = _bm25_search(person) if bm25 else None
        language = person.language
        causes = Causes(person) if bm25 else None
        for asked in questions:
            found, shown, cpu, reads, chars = await _call(
                store, person.user_id, query_input(asked.text), message=asked.text
            )
            figures["question"].add(asked, found, shown, cpu, reads, chars, language, causes)
            if asked.month is not None:
                ranged = {
                    **query_input(asked.text),
                    "after": _day(asked.month[0]),
                    "before": _day(asked.month[1], last=True),
                }
                found, shown, cpu, reads, chars = await _call(
                    store, person.user_id, ranged, message=asked.text
                )
                figures["month as a range"].add(asked, found, shown, cpu, reads, chars, language)
            if asked.parts:
                await _parts(store, person.user_id, asked, figures["parts"], language)
            if plain is not None:
                figures["bm25s"].add(asked, plain(asked.text), {}, language=language)


def claude_calls(which: str = "samples") -> dict[str, dict[str, Any]]:
    """The `recall` calls Claude wrote, per sample: question id (`p<person>q<question>`) →
    the tool's input (bench/data/recall_passages_calls.json): its first call ("samples"),
    or ("second") its next, having read the first's result — None: it answered instead."""
    with CALLS.open(encoding="utf-8") as file:
        return dict(json.load(file)[which])


async def _as_written(
    store: CountingStore,
    numbered: list[tuple[int, tuple[Person, list[Asked]]]],
    calls: dict[str, Any],
    figures: Figures,
    then: dict[str, Any] | None = None,
) -> None:
    """Every question of the people (numbered as in the set) as Claude called the tool
    for it, the input replayed as written; `then`: the turn's second call, where Claude
    made one (what either returned counts; the costs are the first's)."""
    for p, (person, questions) in numbered:
        for q, asked in enumerate(questions):
            key = f"p{p}q{q}"
            turn = await _turn(store, person.user_id, asked.text)
            found, shown, cpu, reads, chars = await _call(
                store, person.user_id, calls[key], turn=turn
            )
            if then is not None and then.get(key) is not None:
                more, seen, *_ = await _call(
                    store, person.user_id, then[key], turn=turn, index_kept=True
                )
                found += [thread for thread in more if thread not in found]
                shown = {t: shown.get(t, "") + seen.get(t, "") for t in {*shown, *seen}}
            figures.add(asked, found, shown, cpu, reads, chars, person.language)


EMULATOR = "STORAGE_EMULATOR_HOST"
# The CPU goal is set at this many conversations per person (issue 45).
LONG_HISTORY = 2_000


async def _long(
    store: CountingStore,
    emulator: GcsEmulator,
    bucket: str,
    loaded: list[tuple[Person, list[Asked]]],
) -> list[tuple[str, str]]:
    """The first person of each language again, each with a history of LONG_HISTORY
    conversations (theirs, and the rest from bench.recall_hard's long history, in
    English, over the same year): recall and CPU per search at that size."""
    filler = long_history(LONG_HISTORY).conversations
    longer: list[tuple[Person, list[Asked]]] = []
    numbers: list[int] = []
    seen: set[str] = set()
    for number, (person, asked_of) in enumerate(loaded):
        if person.language in seen:
            continue
        seen.add(person.language)
        numbers.append(number)
        own = {c.thread_ts for c in person.conversations}
        extra = [c for c in filler if c.thread_ts not in own]
        conversations = person.conversations + extra[: LONG_HISTORY - len(own)]
        user = f"{person.user_id}L"
        longer.append((Person(user, person.language, conversations, []), asked_of))
    for person, _ in longer:
        _seed(emulator, bucket, person)
    index_read = await _index_read_cpu(emulator, bucket, longer[0][0].user_id)
    figures = {name: Figures() for name in ("question", "month as a range", "parts")}
    await _ask(store, longer, figures)
    # The same question again, as the turn's next search: the index as the first parsed it,
    # the conversations as it showed them.
    warm, here, elsewhere = Figures(), Figures(), Figures()
    for person, asked_list in longer:
        for asked in asked_list:
            turn = await _turn(store, person.user_id, asked.text)
            await _call(store, person.user_id, query_input(asked.text), turn=turn)
            found, shown, cpu, reads, chars = await _call(
                store, person.user_id, query_input(asked.text), turn=turn, index_kept=True
            )
            warm.add(asked, found, shown, cpu, reads, chars, person.language)
    # As a turn's first search after the turn end before it (the person's newest
    # conversation's entry rewritten, the same words, through the store): the turn end on
    # this instance (the index it wrote kept), then on another (this one downloads and
    # parses the index). Either way the new turn reads the conversations it shows.
    for person, asked_list in longer:
        newest = max(person.conversations, key=lambda c: c.updated)
        document = document_for(
            newest.thread_ts,
            newest.title,
            newest.summary,
            newest.messages,  # type: ignore[arg-type]
            newest.updated,
            newest.started,
            CHANNEL,
        )
        for asked in asked_list:
            for figures_of, index_kept in ((here, True), (elsewhere, False)):
                await record_search_document(store, home_of(person.user_id), document)
                found, shown, cpu, reads, chars = await _call(
                    store,
                    person.user_id,
                    query_input(asked.text),
                    message=asked.text,
                    index_kept=index_kept,
                )
                figures_of.add(asked, found, shown, cpu, reads, chars, person.language)
    questions = sum(len(q) for _, q in longer)
    label = (
        f"{len(longer)} people of the set with {LONG_HISTORY:,} conversations each "
        f"({questions} questions)"
    )
    rows = figures["question"].rows(f"{label}, the question")[:1]
    rows.append(figures["question"].cost_row(f"{label}, the question"))
    for sample, calls in claude_calls().items():
        written = Figures()
        await _as_written(store, list(zip(numbers, longer, strict=True)), calls, written)
        rows += written.rows(f"{label}, as Claude called it ({sample})")[:1]
        rows.append(written.cost_row(f"{label}, as Claude called it ({sample})"))
    rows.append(figures["parts"].cost_row(f"{label}, as its parts"))
    rows.append(warm.cost_row(f"{label}, the question searched again in the same turn"))
    rows.append(index_read)
    rows.append(
        here.cost_row(f"{label}, a turn's first search, a turn end on this instance before it")
    )
    rows.append(
        elsewhere.cost_row(
            f"{label}, a turn's first search, a turn end on another instance before it"
        )
    )
    return rows


async def _index_read_cpu(emulator: GcsEmulator, bucket: str, user: str) -> tuple[str, str]:
    """The storage client's CPU for one read of a 2,000-conversation index: whole, and
    answered 304 as GCS answers a search that has it already (the emulator ignores
    `ifGenerationNotMatch`: a proxy answers for it). Each read runs on this thread and
    is timed with `time.thread_time()`, so that the proxy's own work is not counted."""
    key = home_of(user).search_key
    with FaultyProxy(emulator.url) as proxy, mock.patch.dict(os.environ, {EMULATOR: proxy.url}):
        store = GcsObjectStore(bucket)
        connection = store._connect(None)  # the store's own reads, on this thread
        stored = store._read(connection, key)
        assert stored is not None
        proxy.add_rule("ifGenerationNotMatch", status=304)
        times: dict[str, list[float]] = {"whole": [], "304": []}
        for _ in range(30):
            for name, read in (
                ("whole", lambda: store._read(connection, key)),
                ("304", lambda: store._read_if_changed(connection, key, stored.generation)),
            ):
                started = time.thread_time()
                read()
                times[name].append(time.thread_time() - started)
        await store.close()
    return (
        f"the storage client reading one index of {LONG_HISTORY:,} conversations "
        f"({stored.size / 1e6:.1f} MB): CPU p50 / p95 ms, whole; answered 304 (unchanged)",
        f"{percentile_ms(times['whole'], 50)} / {percentile_ms(times['whole'], 95)}; "
        f"{percentile_ms(times['304'], 50)} / {percentile_ms(times['304'], 95)}",
    )


async def _parts(
    store: CountingStore, user: str, asked: Asked, figures: Figures, language: str
) -> None:
    """A spanning question as Claude would split it: one call with every part where the
    tool takes several queries; else one call per part, their results in turn (the first
    of each, then the second of each…)."""
    if takes_several_queries():
        found, shown, cpu, reads, chars = await _call(
            store, user, {"queries": asked.parts}, message=asked.text
        )
        figures.add(asked, found, shown, cpu, reads, chars, language)
        return
    lists, shown, cpu, reads, chars = [], {}, 0.0, 0, 0
    for part in asked.parts:
        found, seen, c, r, n = await _call(store, user, {"query": part}, message=asked.text)
        lists.append(found)
        for thread, text in seen.items():
            shown[thread] = shown.get(thread, "") + text
        cpu, reads, chars = cpu + c, reads + r, chars + n
    merged: list[str] = []
    for place in range(max(map(len, lists), default=0)):
        merged += [
            found[place] for found in lists if place < len(found) and found[place] not in merged
        ]
    figures.add(asked, merged, shown, cpu, reads, chars, language)


async def _run(emulator: GcsEmulator) -> list[tuple[str, str]]:
    bucket = f"orion-bench-{uuid.uuid4().hex[:12]}"
    emulator.create_bucket(bucket)
    gcs = GcsObjectStore(bucket)
    store = CountingStore(secret_free_store.kept(gcs, SessionRetention(days=RETENTION_DAYS)))
    try:
        await gcs.connect()
        return await measure(store, emulator, bucket)
    finally:
        await gcs.close()


def run(quick: bool = False) -> list[tuple[str, str]]:
    del quick  # the set is small enough to run whole
    with GcsEmulator() as emulator, benchmark_environment(emulator.url):
        return asyncio.run(_run(emulator))


if __name__ == "__main__":
    print_table(run())
