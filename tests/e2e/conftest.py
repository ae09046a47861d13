"""Fixtures for end-to-end tests: Orion over HTTP (or Socket Mode) against the fake Slack and
Claude."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from app.slack.conversation import paced_stream
from app.socket_mode import serve_socket_mode
from tests.e2e.distribution import distribution_overrides
from tests.e2e.memory_bucket import Bucket
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer, make_settings, orion_servers


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack() as fake:
        yield fake


@pytest.fixture
def claude() -> Iterator[FakeClaude]:
    with FakeClaude() as fake:
        yield fake


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    return tmp_path / "memories"


@pytest.fixture
def orion(slack: FakeSlack, claude: FakeClaude, memory_dir: Path) -> Iterator[OrionServer]:
    with OrionServer(make_settings(slack, claude, memory_dir=memory_dir)) as server:
        yield server


@pytest.fixture
def bucket(gcs_emulator: GcsEmulator, gcs_bucket: str) -> Bucket:
    """The test's bucket (`gcs_bucket`), read and written straight on the emulator."""
    return Bucket(gcs_emulator, gcs_bucket)


@pytest.fixture
def orion_on_bucket(
    gcs_proxy: FaultyProxy, slack: FakeSlack, claude: FakeClaude, gcs_bucket: str
) -> Iterator[Callable[..., OrionServer]]:
    """Start Orion on the test's bucket (through the fault proxy) with settings overrides.

    Depends on `gcs_proxy`, so Orion (whose GCS client may still be retrying a faulted call
    in a worker thread) is stopped before the proxy is.
    """
    with orion_servers(slack, claude, gcs_memories_bucket=gcs_bucket) as start:
        yield start
    # The stopped server's anthropic client closes itself when garbage-collected, on
    # whatever event loop is running then: in a later test, the next server's, where it
    # fails ("Event loop is closed") and logs a stack trace into that server's log.
    # Collect it now, with no loop running (the responder may hold the server).
    claude.responder = None
    gc.collect()


@pytest.fixture
def distribution_on_bucket(
    gcs_proxy: FaultyProxy, slack: FakeSlack, claude: FakeClaude, gcs_bucket: str
) -> Iterator[Callable[..., OrionServer]]:
    """Start Orion in distribution mode (many workspaces, docs/distribution.md) on the
    test's bucket through the fault proxy."""
    defaults = distribution_overrides(slack) | {"gcs_memories_bucket": gcs_bucket}
    with orion_servers(slack, claude, **defaults) as start:
        yield start


@pytest.fixture
def socket_slack() -> Iterator[FakeSlack]:
    with FakeSlack(socket_mode=True) as fake:
        yield fake


@pytest.fixture
def orion_socket(socket_slack: FakeSlack, claude: FakeClaude, tmp_path: Path) -> Iterator[None]:
    """Orion in Socket Mode, on its own thread and loop, until the test ends."""
    settings = make_settings(
        socket_slack, claude, slack_app_token="xapp-test-app-token", memory_dir=tmp_path
    )
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    def serve() -> None:
        loop.run_until_complete(serve_socket_mode(settings, stop=stop))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(timeout=60)
        assert not thread.is_alive(), "Orion's Socket Mode did not stop"
        # As asyncio.run does: what the run left on the loop (the socket-mode client's
        # message processor, say) is cancelled on it. Left pending, it is finalised by a
        # later test's garbage collection, off its loop, where slack_sdk's processor
        # catches the error of every attempt and logs it, for ever.
        leftover = asyncio.all_tasks(loop)
        for task in leftover:
            task.cancel()

        async def cancelled() -> None:
            await asyncio.gather(*leftover, return_exceptions=True)
            await loop.shutdown_asyncgens()

        loop.run_until_complete(cancelled())
        loop.close()


@pytest.fixture
def streams_past_their_lifetime(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every stream Orion opens counts as older than Slack keeps streams (about five
    minutes): a refusal is then an expiry, not the person's Stop (app/slack/conversation/
    paced_stream.py). Tests cannot wait five minutes; the fake Slack's refusal is the same."""
    monkeypatch.setattr(paced_stream, "STREAM_LIFETIME_S", 0.0)
