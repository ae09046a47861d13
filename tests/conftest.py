"""Shared fixtures: the loopback protocol peers every test talks to (see tests/fakes/)."""

from __future__ import annotations

import gc
import socket
import uuid
from collections.abc import Iterator

import pytest
from langfuse import Langfuse
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from app.observability import tracing
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.fakes.langfuse_api import FakeLangfuse
from tests.span_log import SpanLog

# The `backend` and `store` fixtures: every store test runs on both backends.
pytest_plugins = ["tests.backends"]

# Modules whose tests start Orion as real processes: the suite's longest tests.
_STARTS_PROCESSES = ("tests.orion_process", "tests.terminal")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Longest first: the tests that start Orion processes, then the end-to-end, attack and
    conformance suites, then the rest. pytest-xdist hands tests out in this order as workers
    free up, so the many short tests at the end let the workers finish together instead of
    one starting a long test as the others run out of work (docs/testing.md)."""

    def weight(item: pytest.Item) -> int:
        module = getattr(item, "module", None)
        imported = {getattr(value, "__module__", None) for value in vars(module).values()}
        if imported & set(_STARTS_PROCESSES):
            return 0
        end_to_end = ("tests/e2e/", "tests/security/", "tests/design/")
        return 1 if item.nodeid.startswith(end_to_end) else 2

    items.sort(key=weight)


def pytest_collection_finish() -> None:
    """What is alive now (every module the tests imported) lives for the whole run: leave
    it out of every later garbage collection. The tests that collect a stopped server's
    leftovers (tests/e2e/conftest.py) then scan what their own test made, not the
    hundreds of thousands of objects the imports made."""
    gc.collect()
    gc.freeze()


@pytest.fixture(scope="session")
def gcs_emulator() -> Iterator[GcsEmulator]:
    """One fake-gcs-server process for the whole run; tests isolate by bucket."""
    with GcsEmulator() as emulator:
        yield emulator


@pytest.fixture
def gcs_bucket(gcs_emulator: GcsEmulator, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh, empty bucket; STORAGE_EMULATOR_HOST points google-cloud-storage at it."""
    name = f"orion-test-{uuid.uuid4().hex[:12]}"
    gcs_emulator.create_bucket(name)
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_emulator.url)
    return name


@pytest.fixture
def gcs_proxy(
    gcs_emulator: GcsEmulator, gcs_bucket: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FaultyProxy]:
    """A FaultyProxy in front of the emulator; STORAGE_EMULATOR_HOST points at it instead.

    Set up after `gcs_bucket` pointed the variable at the emulator. Request it before
    anything that builds a GCS client (Orion, a store): the client reads the variable when
    it is built, and what is set up after the proxy is torn down before it, so a client
    still retrying a faulted call stops before the proxy does.
    """
    with FaultyProxy(gcs_emulator.url) as proxy:
        monkeypatch.setenv("STORAGE_EMULATOR_HOST", proxy.url)
        yield proxy


@pytest.fixture(scope="session")
def fake_langfuse() -> Iterator[FakeLangfuse]:
    with FakeLangfuse() as fake:
        yield fake


@pytest.fixture
def spans(fake_langfuse: FakeLangfuse) -> Iterator[SpanLog]:
    """Turn tracing on for one test; yields the spans (and scores) Orion exported.

    A client of its own per test (Langfuse keeps one per public key): Orion shuts its
    tracing client down when it stops, as in production, and a shared one would drop the
    next test's scores.
    """
    exporter = InMemorySpanExporter()
    client = Langfuse(
        public_key=f"pk-lf-test-{uuid.uuid4().hex[:8]}",
        secret_key="sk-lf-test",
        base_url=fake_langfuse.url,
        tracer_provider=TracerProvider(),
        span_exporter=exporter,
        mask=tracing.mask_secrets,  # as in production
    )
    fake_langfuse.clear()
    tracing.set_client(client)
    try:
        yield SpanLog(client, exporter, fake_langfuse)
    finally:
        tracing.set_client(None)
        client.shutdown()


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A loopback port that refuses connections for the whole test: bound and never
    listening, so no server another test starts can take it (a port only found free, then
    let go, may be answering someone else's requests by the time it is used)."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]
