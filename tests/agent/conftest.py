"""The agent's peers: FakeClaude behind Orion's own Claude client, and a reply sink that
records what the person would see."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from anthropic import AsyncAnthropic

from app.agent.memory_task import MemoryTask
from app.config import DEFAULT_MODEL, Settings
from app.services import build_claude_client
from tests.fakes.anthropic_api import FakeClaude

# The model Orion answers with by default, so the fake answers as it does today.
MODEL = DEFAULT_MODEL


class RecordingSink:
    """A `ReplySink` that keeps every piece of the answer, every progress status and
    every state of every task shown."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.progress: list[str] = []
        self.tasks: list[MemoryTask] = []

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    async def append(self, markdown: str) -> None:
        self.pieces.append(markdown)

    async def show_progress(self, status: str) -> None:
        self.progress.append(status)

    async def show_task(self, task: MemoryTask) -> None:
        self.tasks.append(task)

    def link_to(self, channel: str, ts: str, thread_ts: str | None = None) -> str | None:
        return f"https://example.slack.com/archives/{channel}/p{ts.replace('.', '')}"


@pytest.fixture(scope="package")
def shared_claude() -> Iterator[FakeClaude]:
    with FakeClaude() as fake:
        yield fake


@pytest.fixture
def claude(shared_claude: FakeClaude) -> FakeClaude:
    shared_claude.reset()
    return shared_claude


@pytest.fixture(scope="package")
async def claude_client(shared_claude: FakeClaude) -> AsyncIterator[AsyncAnthropic]:
    """Orion's production client (aiohttp transport), pointed at FakeClaude, no retries."""
    settings = Settings(
        _env_file=None,  # type: ignore[call-arg]
        slack_bot_token="xoxb-agent-tests",
        anthropic_api_key="sk-ant-agent-tests",
        anthropic_base_url=shared_claude.url,
        anthropic_max_retries=0,
    )
    client = build_claude_client(settings)
    yield client
    await client.close()


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()
