"""`recall` does not bring back conversations older than the retention window."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from app.learning.recall import RecallTool, search_sessions
from app.learning.session_index import SessionEntry
from app.learning.summary_file import SessionSummary, render_summary
from app.memory.retention import ExpiringSessionsStore, SessionRetention
from app.memory.scopes import MemoryScope, conversations_index_key, session_context_key
from app.storage.store import ObjectStore
from tests.backends import OTHER_THREAD, THREAD, USER, Backend

DAY = timedelta(days=1)
OLD_THREAD = "1712000001.000001"
TITLE = "Q3 budget review"
BODY = "Cloud spend is over the Q3 budget."


def days_later(backend: Backend, days: float) -> ExpiringSessionsStore:
    """The backend as Orion sees it, `days` days after now."""

    def clock() -> datetime:
        return datetime.now(UTC) + days * DAY

    return ExpiringSessionsStore(backend.store, SessionRetention(30, clock))


async def seed(store: ObjectStore) -> None:
    now = datetime.now(UTC)
    summary = SessionSummary(TITLE, BODY, user_id=USER, updated=now)
    await store.write(session_context_key(OLD_THREAD), render_summary(summary))
    entry = SessionEntry(OLD_THREAD, TITLE, now)
    await store.write(conversations_index_key(USER), json.dumps([entry.to_json()]))


async def test_a_40_day_old_summary_is_not_recalled(backend: Backend) -> None:
    await seed(backend.store)

    hits, counts = await search_sessions(
        days_later(backend, 40), user_id=USER, queries=["Q3 budget"], exclude_thread=THREAD
    )
    assert hits == [] and counts.read == 0

    tool = RecallTool(days_later(backend, 40), MemoryScope(USER, OTHER_THREAD))
    answer = await tool.call({"query": "Q3 budget"})
    assert TITLE not in answer and BODY not in answer
    assert "no earlier conversations" in answer


async def test_a_10_day_old_summary_is_recalled(backend: Backend) -> None:
    await seed(backend.store)
    tool = RecallTool(days_later(backend, 10), MemoryScope(USER, OTHER_THREAD))
    answer = json.dumps(await tool.call({"query": "Q3 budget"}))
    assert TITLE in answer and BODY in answer
