"""`recall` does not bring back conversations older than the retention window."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from app.learning.recall import RecallTool, search_homes
from app.learning.search_index import document_for, record_search_document
from app.memory.homes import person
from app.memory.retention import ExpiringSessionsStore, SessionRetention
from app.memory.scopes import MemoryScope
from app.storage.store import ObjectStore
from tests.backends import OTHER_THREAD, THREAD, USER, Backend
from tests.layout import conversation

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
    home = person(USER)
    kept = conversation(USER, OLD_THREAD, title=TITLE, summary=BODY, at=now)
    await store.write(home.conversation_key(OLD_THREAD), kept)
    await record_search_document(store, home, document_for(OLD_THREAD, TITLE, BODY, [], now))


async def test_a_40_day_old_conversation_is_not_recalled(backend: Backend) -> None:
    await seed(backend.store)

    hits, counts = await search_homes(
        days_later(backend, 40), [person(USER)], ["Q3 budget"], exclude_thread=THREAD
    )
    assert hits == [] and counts.read == 0

    tool = RecallTool(days_later(backend, 40), MemoryScope(USER, OTHER_THREAD))
    answer = await tool.call({"query": "Q3 budget"})
    assert TITLE not in answer and BODY not in answer
    assert "no earlier conversations" in answer


async def test_a_10_day_old_conversation_is_recalled(backend: Backend) -> None:
    await seed(backend.store)
    tool = RecallTool(days_later(backend, 10), MemoryScope(USER, OTHER_THREAD))
    answer = json.dumps(await tool.call({"query": "Q3 budget"}))
    assert TITLE in answer and BODY in answer
