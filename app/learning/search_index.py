"""Each owner's search index over their own conversations, `{home}/search.json`: one object a search
reads before the k conversations it ranks first (1 + k reads), out of the memory tool's reach,
rewritten optimistically at each turn end. Inverted, so a search costs what its words are found in;
its format, bounds and repair are in docs/architecture.md ("Inside the search index")."""

from __future__ import annotations

import asyncio
import bisect
import copy
import itertools
import json
import operator
import re
import sys
import threading
import zlib
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from app.learning.search_terms import document_terms
from app.learning.transcript import Utterance
from app.memory.homes import Home
from app.memory.retention import cutoff_of
from app.memory.scopes import THREAD_TS_PATTERN, is_channel_id
from app.observability.logging import get_logger
from app.observability.redaction import redact_secret_shapes
from app.storage.store import ObjectStore, Unchanged, read_if_changed, update
from app.storage.team_scope import current_tenant

log = get_logger(__name__)

# The retention window bounds the index; this bounds it against a flood of threads (333
# new conversations a day for 30 days), far beyond what an owner holds.
MAX_INDEXED_SESSIONS = 10_000

VERSION = 3
# Distinct terms kept per conversation: a long conversation (a transcript's 120,000
# characters) has a few thousand; the title's, the summary's and the person's come first.
MAX_DOCUMENT_TERMS = 3_000
# A conversation's text indexed at most (title, summary and transcript together).
MAX_INDEXED_CHARS = 150_000
MAX_TITLE_CHARS = 200
# The whole object: a year of long daily conversations is about 2 MB, 2,000 shorter ones
# 0.9 MB (bench/recall_hard.py); a search over a crafted index at this cap stays bounded
# (docs/benchmarks.md).
MAX_INDEX_CHARS = 6_000_000
# Lines of postings are doubled when they hold more than this on average…
TARGET_BUCKET_CHARS = 2_048
MAX_BUCKETS = 8_192
# …and a line Orion wrote never holds more than the postings of a few terms found in
# every entry: a longer one was not written by Orion.
MAX_BUCKET_CHARS = 256_000
# An entry's count of one term, at most (BM25 saturates long before).
MAX_TERM_COUNT = 999
# Title words count as much as this many mentions.
TITLE_WEIGHT = 2
_THREADS = re.compile(f"{THREAD_TS_PATTERN}(?: {THREAD_TS_PATTERN})*")
_IDS = re.compile("[0-9a-z]{1,8}(?: [0-9a-z]{1,8})*")
_CHANNELS = re.compile("(?:[CDG][A-Z0-9]{2,30}|-)(?: (?:[CDG][A-Z0-9]{2,30}|-))*")
# An entry whose postings were all removed.
_EMPTY_ENTRY = re.compile("\t[^\t\n,]+(?=[\t\n]|\\Z)")
# Past this many ids removed at once, one pass with a lookup per posting.
_MAX_ALTERNATIVES = 200
# An index's entries, one list each, in the same order (newest first).
_COLUMNS = ("threads", "ids", "updated", "started", "lengths", "titles", "channels")


@dataclass(frozen=True)
class SearchDocument:
    """One conversation's entry, as a turn end makes it."""

    thread_ts: str
    updated: int  # Unix seconds of the thread's last turn
    started: int  # Unix seconds of its first message (as far as known)
    title: str
    terms: dict[str, int]  # each term and how often it occurs
    channel: str | None = None  # the DM the thread is in

    @property
    def length(self) -> int:
        return sum(self.terms.values())


def document_for(
    thread_ts: str,
    title: str,
    summary: str,
    messages: Sequence[Utterance],
    updated: datetime,
    started: datetime | None = None,
    channel: str | None = None,
) -> SearchDocument:
    """A conversation's entry: its title, its summary and what was said, the person's
    words first (kept whole when a long conversation has more terms than an entry holds),
    within MAX_INDEXED_CHARS. Secrets are redacted first: split into terms, a token's
    pieces would get past the store's redaction (a model's summary may repeat one)."""
    room = MAX_INDEXED_CHARS
    texts: list[tuple[str, int]] = []
    ordered = [
        (title[:MAX_TITLE_CHARS], TITLE_WEIGHT),
        (summary, 1),
        *((m.text, 1) for m in messages if m.role == "user"),
        *((m.text, 1) for m in messages if m.role != "user"),
    ]
    for text, weight in ordered:
        if room <= 0:
            break
        text = redact_secret_shapes(text)
        texts.append((text[:room], weight))
        room -= len(text)
    terms = document_terms(texts, limit=MAX_DOCUMENT_TERMS)
    began = int((started or updated).timestamp())
    moment = int(updated.timestamp())
    return SearchDocument(
        thread_ts,
        moment,
        min(began, moment),
        _title(title),
        {term: min(count, MAX_TERM_COUNT) for term, count in terms.items()},
        channel if is_channel_id(channel) else None,
    )


def _title(title: str) -> str:
    """A title as the index keeps it: one line, bounded, and as the store's redaction
    leaves it (so that it never changes the index's JSON)."""
    flat = " ".join(title.split())[:MAX_TITLE_CHARS]
    return redact_secret_shapes(flat).replace("\\", "/")


def bucket_of(term: str, buckets: int) -> int:
    return zlib.crc32(term.encode()) & (buckets - 1)


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        number, digit = divmod(number, 36)
        text = digits[digit] + text
        if not number:
            return text


class SearchIndex:
    """A person's entries, newest first, by column, and their postings (`body` from `base`
    on, cut into `len(offsets) - 1` lines, line `b` being `body[base + offsets[b]:base +
    offsets[b + 1] - 1]`: a search reads the object's text in place, without a copy)."""

    def __init__(self, complete: bool = False) -> None:
        self.threads: list[str] = []
        self.ids: list[str] = []
        self.updated: list[int] = []
        self.started: list[int] = []
        self.lengths: list[int] = []
        self.titles: list[str] = []
        self.channels: list[str] = []  # "-": not known
        self.body = ""
        self.base = 0
        self.offsets: list[int] = []
        self._set_lines([""] * 16)
        self.next_id = 0
        self.complete = complete
        # Made on first use by a search (an index being written is never searched).
        self._places: dict[str, int] | None = None
        self._threads: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self.threads)

    @property
    def buckets(self) -> int:
        return len(self.offsets) - 1

    def span(self, term: str) -> tuple[int, int] | None:
        """Where the postings of `term` are in `body` (`,id,id*count…`), None when no entry
        holds it: found within the one line its hash picks, nothing copied."""
        at = bucket_of(term, self.buckets)
        end_of_line = self.base + self.offsets[at + 1] - 1
        needle = f"\t{term},"
        start = self.body.find(needle, self.base + self.offsets[at], end_of_line)
        if start == -1:
            return None
        end = self.body.find("\t", start + 1, end_of_line)
        return start + len(needle) - 1, end_of_line if end == -1 else end

    def postings(self, term: str) -> str:
        """The postings of `term` (`,id,id*count…`), empty when no entry holds it."""
        span = self.span(term)
        return self.body[span[0] : span[1]] if span else ""

    def newer_than(self, floor: int) -> SearchIndex:
        """The index without the entries updated before `floor` (the last ones): itself
        when it has none, else a copy of its columns over the same postings (ids no entry
        has are ignored), so that an index kept for later searches stays whole."""
        keep = bisect.bisect_right(self.updated, -floor, key=operator.neg)
        if keep == len(self.threads):
            return self
        newer = copy.copy(self)
        newer._places = newer._threads = None
        for name in _COLUMNS:
            setattr(newer, name, getattr(self, name)[:keep])
        return newer

    def position_of(self) -> dict[str, int]:
        """Each entry's id → where it is in the columns (made once per index)."""
        if self._places is None:
            self._places = dict(zip(self.ids, range(len(self.ids)), strict=True))
        return self._places

    def place_of(self, thread: str | None) -> int | None:
        """Where `thread`'s entry is in the columns, None when it has none."""
        if thread is None:
            return None
        if self._threads is None:
            self._threads = dict(zip(self.threads, range(len(self.threads)), strict=True))
        return self._threads.get(thread)

    def channel(self, at: int) -> str | None:
        channel = self.channels[at]
        return None if channel == "-" else channel

    # Writing (a turn end, a fill-in, a forgetting): never on a search's path.

    def without(self, threads: set[str]) -> None:
        """The entries of `threads` gone, their ids removed from every posting."""
        places = {at for at, thread in enumerate(self.threads) if thread in threads}
        if not places:
            return
        self._places = self._threads = None
        gone = {self.ids[at] for at in places}
        for name in _COLUMNS:
            column = getattr(self, name)
            setattr(self, name, [value for at, value in enumerate(column) if at not in places])
        self._remove_postings(gone)

    def _remove_postings(self, ids: set[str]) -> None:
        if not ids:
            return
        if len(ids) <= _MAX_ALTERNATIVES:
            alternatives = "|".join(sorted(map(re.escape, ids)))
            pattern = re.compile(f",(?:{alternatives})(?:\\*[0-9]+)?(?![0-9a-z*])")
            body = pattern.sub("", self.body[self.base :])
        else:
            posting = re.compile(",([0-9a-z]+)(?:\\*[0-9]+)?")
            body = posting.sub(
                lambda m: "" if m.group(1) in ids else m.group(0), self.body[self.base :]
            )
        self._set_lines(_EMPTY_ENTRY.sub("", body).split("\n"))

    def add(self, documents: Iterable[SearchDocument]) -> None:
        """`documents` as entries, in their place by time (their threads must have none):
        the postings' lines are cut apart and joined once for all of them."""
        self._places = self._threads = None
        lines = self._lines()
        for document in documents:
            lines = self._add(document, lines)
        self._set_lines(lines)

    def _add(self, document: SearchDocument, lines: list[str]) -> list[str]:
        entry_id = _base36(self.next_id)
        self.next_id += 1
        at = bisect.bisect_left(self.updated, -document.updated, key=operator.neg)
        entry = (document.thread_ts, entry_id, document.updated, document.started)
        values = (*entry, document.length, document.title, document.channel or "-")
        for name, value in zip(_COLUMNS, values, strict=True):
            getattr(self, name).insert(at, value)
        size = sum(map(len, lines))
        if size > 2 * TARGET_BUCKET_CHARS * len(lines) and len(lines) < MAX_BUCKETS:
            lines = _rehashed(lines, len(lines) * 2)
        buckets = len(lines)
        by_bucket: dict[int, list[str]] = {}
        for term, count in document.terms.items():
            posting = f",{entry_id}*{count}" if count > 1 else f",{entry_id}"
            by_bucket.setdefault(bucket_of(term, buckets), []).append(f"\t{term}{posting}")
        for bucket, entries in by_bucket.items():
            lines[bucket] = _with_postings(lines[bucket], entries)
        return lines

    def _lines(self) -> list[str]:
        return self.body[self.base :].split("\n")

    def _set_lines(self, lines: list[str]) -> None:
        self.body, self.base = "\n".join(lines), 0
        # Line `b` ends one before `offsets[b + 1]`, at its line break (or the end).
        self.offsets = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))


def _with_postings(line: str, entries: list[str]) -> str:
    """`line` with each `\\t{term},{posting}` of `entries` added (to the term's postings
    when it has some)."""
    added: list[str] = []
    for entry in entries:
        if len(line) + len(entry) + sum(map(len, added)) > MAX_BUCKET_CHARS:
            # Only terms found in nearly every entry fill a line so: they weigh nothing.
            break
        comma = entry.index(",")
        needle = entry[: comma + 1]
        start = line.find(needle)
        if start == -1:
            added.append(entry)
            continue
        end = line.find("\t", start + 1)
        posting = entry[comma:]
        line = line + posting if end == -1 else line[:end] + posting + line[end:]
    return line + "".join(added)


def _rehashed(lines: list[str], buckets: int) -> list[str]:
    regrouped: list[list[str]] = [[] for _ in range(buckets)]
    for line in lines:
        for entry in line.split("\t")[1:]:
            term = entry.split(",", 1)[0]
            regrouped[bucket_of(term, buckets)].append(entry)
    return ["".join(f"\t{entry}" for entry in group) for group in regrouped]


def parse_search_index(raw: str | None, *, cutoff: datetime | None = None) -> SearchIndex:
    """The index as Orion wrote it (an unsound one is empty and logged), never raised."""
    if not raw:
        return SearchIndex()
    index = _parsed(raw)
    if index is None:
        log.warning("memory.file.unreadable", file="search_index", reason="parts_disagree")
        return SearchIndex()
    return _within(index, cutoff)


# Indexes parsed or written lately, with their generation: a search downloads and parses
# only one that changed since (docs/architecture.md, "Recall").
PARSED_KEPT_BYTES = 24_000_000
# A kept index's cost beyond its text (about 420 bytes measured an entry), or many
# one-conversation people would keep tens of thousands of indexes.
_KEPT_INDEX_BYTES = 2_000
_KEPT_ENTRY_BYTES = 450


class _Kept(NamedTuple):
    generation: int
    updated: datetime  # when it was written
    parsed: SearchIndex  # read, never changed


_parsed_kept: OrderedDict[tuple[str, str], _Kept] = OrderedDict()
_parsed_lock = threading.Lock()


def tenant_key(key: str) -> tuple[str, str]:
    """A key as what this instance keeps of it is filed: the same key names another
    object in another workspace (distribution mode)."""
    tenant = current_tenant()
    return (tenant.segment if tenant is not None else "", key)


def _keep(key: str, kept: _Kept) -> None:
    with _parsed_lock:
        _parsed_kept[tenant_key(key)] = kept
        _parsed_kept.move_to_end(tenant_key(key))
        size = sum(map(_held, _parsed_kept.values()))
        while size > PARSED_KEPT_BYTES and len(_parsed_kept) > 1:
            size -= _held(_parsed_kept.popitem(last=False)[1])


def _held(kept: _Kept) -> int:
    """The bytes a kept index holds, about: its text as Python stores it (up to 4 a
    character) and its columns."""
    parsed = kept.parsed
    return sys.getsizeof(parsed.body) + _KEPT_INDEX_BYTES + _KEPT_ENTRY_BYTES * len(parsed)


async def searchable_index(
    store: ObjectStore, home: Home, *, cutoff: datetime | None
) -> SearchIndex | None:
    """The owner's index as stored now, parsed (None when there is none, or it expired):
    the one kept when storage says it has not changed since, else read and parsed off the
    event loop (megabytes for a long history). Raises whatever storage raises. The
    result is read, never changed."""
    key = home.search_key
    with _parsed_lock:
        kept = _parsed_kept.get(tenant_key(key))
    stored = await (read_if_changed(store, key, kept.generation) if kept else store.read(key))
    if isinstance(stored, Unchanged):
        assert kept is not None  # only a conditional read answers UNCHANGED
        if cutoff is not None and kept.updated < cutoff:
            return None  # expired since, unchanged: as the store's `read` would say
        with _parsed_lock:
            _parsed_kept.move_to_end(tenant_key(key))
        return _within(kept.parsed, cutoff)
    if stored is None:
        # Forgotten (or never written): what this instance kept of it goes too.
        with _parsed_lock:
            _parsed_kept.pop(tenant_key(key), None)
        return None
    index = await asyncio.to_thread(parse_search_index, stored.content)
    _keep(key, _Kept(stored.generation, stored.updated, index))
    return _within(index, cutoff)


def _within(index: SearchIndex, cutoff: datetime | None) -> SearchIndex:
    return index.newer_than(int(cutoff.timestamp())) if cutoff is not None else index


def _parsed(raw: str) -> SearchIndex | None:
    """The index if its parts agree with each other, else None. Every check is one pass
    (in C wherever it can be), so a hostile index at the cap costs bounded CPU."""
    if len(raw) > MAX_INDEX_CHARS:
        return None
    end = raw.find("\n")
    if end == -1:
        return None
    try:
        data = json.loads(raw[:end])
    except (ValueError, RecursionError):  # RecursionError: nested past the parser's limit
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    threads, ids, channels = (data.get(name) for name in ("threads", "ids", "channels"))
    next_id = data.get("next")
    updated, started, lengths, titles, offsets = (
        _list(data, name) for name in ("updated", "started", "lengths", "titles", "buckets")
    )
    if not (type(threads) is type(ids) is type(channels) is str and type(next_id) is int):
        return None
    if updated is None or started is None or lengths is None or titles is None or offsets is None:
        return None
    index = SearchIndex(complete=data.get("complete") is True)
    index.next_id = next_id
    if threads:
        if not (
            _THREADS.fullmatch(threads) and _IDS.fullmatch(ids) and _CHANNELS.fullmatch(channels)
        ):
            return None
        index.threads, index.ids = threads.split(" "), ids.split(" ")
        index.channels = channels.split(" ")
    elif ids or channels:
        return None
    count = len(index.threads)
    numbers = (updated, started, lengths)
    sound = (
        count <= MAX_INDEXED_SESSIONS
        and len(index.ids) == count
        and len(index.channels) == count
        and len(set(index.threads)) == count
        and len(set(index.ids)) == count
        and all(len(column) == count for column in (*numbers, titles))
        and all(set(map(type, column)) <= {int} for column in (*numbers, offsets))
        and set(map(type, titles)) <= {str}
        and all(map(operator.ge, updated, itertools.islice(updated, 1, None)))
        and all(0 <= value < 2**40 for column in numbers for value in column[:1] + column[-1:])
        and min(lengths, default=0) >= 0
    )
    if not sound:
        return None
    buckets = len(offsets) - 1
    if buckets < 1 or buckets > MAX_BUCKETS or buckets & (buckets - 1):
        return None
    # Each line within its bound, and the lines the rest of the text: every lookup is
    # bounded whatever else a forged index holds.
    widths = list(map(operator.sub, itertools.islice(offsets, 1, None), offsets))
    if offsets[0] != 0 or offsets[-1] != len(raw) - end or min(widths) < 1:
        return None
    if max(widths) > MAX_BUCKET_CHARS + 1:
        return None
    index.updated, index.started, index.lengths, index.titles = updated, started, lengths, titles
    index.body, index.base, index.offsets = raw, end + 1, offsets
    return index


def _list(data: dict[str, Any], name: str) -> list[Any] | None:
    value = data.get(name)
    return value if type(value) is list else None


def render_search_index(index: SearchIndex) -> str:
    """The object as written: bounded (when a flood of conversations would outgrow it,
    the oldest entries go, logged)."""
    if index.base:
        index._set_lines(index._lines())  # as read: the postings on their own
    if len(index) > MAX_INDEXED_SESSIONS:
        _drop_oldest(index, len(index) - MAX_INDEXED_SESSIONS)
    while len(index.body) > MAX_INDEX_CHARS * 9 // 10 and len(index):
        # Each entry's share of the postings, roughly: drop enough of the oldest at once.
        excess = len(index.body) - MAX_INDEX_CHARS * 8 // 10
        share = max(1, len(index.body) // len(index))
        _drop_oldest(index, min(len(index), excess // share + 1))
    data = {
        "version": VERSION,
        "complete": index.complete,
        "next": index.next_id,
        "threads": " ".join(index.threads),
        "ids": " ".join(index.ids),
        "updated": index.updated,
        "started": index.started,
        "lengths": index.lengths,
        "titles": index.titles,
        "channels": " ".join(index.channels),
        "buckets": index.offsets,
    }
    # ASCII (the module docstring; docs/benchmarks.md).
    header = json.dumps(data, separators=(",", ":"))
    return f"{header}\n{index.body}"


def _drop_oldest(index: SearchIndex, count: int) -> None:
    log.warning("memory.search_index.trimmed", dropped=count)
    index.without(set(index.threads[len(index) - count :]))


def with_documents(
    raw: str | None,
    documents: Iterable[SearchDocument],
    *,
    cutoff: datetime | None = None,
    replace: bool = True,
    complete: bool | None = None,
) -> str:
    """The index with `documents` added (`replace`: over the entries of their threads; else only
    where a thread has none), without expired entries. `complete` sets the flag; None keeps it."""
    index = _with_documents(raw, documents, cutoff=cutoff, replace=replace)
    if complete is not None:
        index.complete = complete
    return render_search_index(index)


def _with_documents(
    raw: str | None,
    documents: Iterable[SearchDocument],
    *,
    cutoff: datetime | None = None,
    replace: bool = True,
) -> SearchIndex:
    index = parse_search_index(raw)
    floor = int(cutoff.timestamp()) if cutoff is not None else None
    pairs = zip(index.threads, index.updated, strict=True)
    expired = set() if floor is None else {thread for thread, at in pairs if at < floor}
    fresh = [d for d in documents if floor is None or d.updated >= floor]
    known = set(index.threads)
    if not replace:
        fresh = [d for d in fresh if d.thread_ts not in known]
    index.without(expired | {d.thread_ts for d in fresh})
    index.add(fresh)
    return index


def without_threads(raw: str | None, threads: set[str]) -> str | None:
    """The index without the entries of `threads` (conversations the person forgot);
    `raw` itself when none of them is there."""
    if raw is None:
        return None
    index = parse_search_index(raw)
    if threads.isdisjoint(index.threads):
        return raw
    index.without(threads)
    return render_search_index(index)


WRITE_ATTEMPTS = 10


def _rewritten(
    raw: str | None, document: SearchDocument, cutoff: datetime | None
) -> tuple[SearchIndex, str]:
    index = _with_documents(raw, [document], cutoff=cutoff)
    return index, render_search_index(index)


async def record_search_document(store: ObjectStore, home: Home, document: SearchDocument) -> None:
    """Add or replace the thread's entry (at turn end, with its summary)."""
    cutoff = cutoff_of(store)
    key = home.search_key
    stored = await store.read(key)
    read = stored.content if stored is not None else None
    # Rewriting a long history's index takes milliseconds: off the event loop, from the
    # version just read; only a concurrent writer's version is redone in `update`.
    index, written = await asyncio.to_thread(_rewritten, read, document, cutoff)

    def transform(raw: str | None) -> str:
        return written if raw is read else with_documents(raw, [document], cutoff=cutoff)

    # More tries than `update`'s default: every turn end of the owner's concurrent threads,
    # on any instance, rewrites this one object, and a write that gives up loses the entry
    # until the thread is continued. It runs after the answer, so waiting costs nobody.
    landed = await update(store, key, transform, attempts=WRITE_ATTEMPTS, already_read=stored)
    if landed is not None and landed.content is written:
        # The owner's next search here asks only whether it changed since. (The store's
        # redaction leaves an index as written: see the module docstring.)
        _keep(key, _Kept(landed.generation, landed.updated, index))


async def remove_documents(store: ObjectStore, home: Home, threads: set[str]) -> None:
    await update(store, home.search_key, lambda raw: without_threads(raw, threads))
