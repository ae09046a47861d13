"""RetryingBuild's contract, on its own (the end-to-end behaviour is in
tests/e2e/test_start_heals.py): the back-off schedule, who waits and who is told at once,
and a permanent failure that ends the retries. No sleeping: every step waits on an
explicit signal, and the back-offs are long enough never to elapse during a test."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from app.runtime.retrying_build import Backoff, BuildState, NotBuilt, RetryingBuild

NEVER_DUE = Backoff(first_s=3600, max_s=3600)


def test_the_back_off_doubles_from_half_a_second_up_to_thirty() -> None:
    delays = list(itertools.islice(Backoff().delays(), 9))
    assert delays == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]


async def test_a_caller_during_an_attempt_waits_for_it() -> None:
    gate = asyncio.Event()

    async def build() -> str:
        await gate.wait()
        return "built"

    retrying = RetryingBuild("thing", build, backoff=NEVER_DUE)
    waiting = asyncio.ensure_future(retrying.get())
    await asyncio.sleep(0)  # let it start waiting (not a wait for time to pass)
    assert not waiting.done() and retrying.status().state is BuildState.BUILDING
    gate.set()
    assert await waiting == "built"
    assert retrying.status().ready and await retrying.get() == "built"


async def test_between_attempts_a_caller_is_told_at_once_without_an_extra_attempt() -> None:
    attempted = asyncio.Event()

    async def build() -> str:
        attempted.set()
        raise ConnectionError("blip")

    retrying = RetryingBuild("thing", build, backoff=NEVER_DUE)
    with pytest.raises(NotBuilt) as failure:
        await retrying.get()
    assert failure.value.__cause__ is None and "blip" not in str(failure.value)
    assert retrying.status().state is BuildState.RETRYING
    assert retrying.status().error == "ConnectionError"
    # Still between attempts: told again at once, the build is not re-run for it.
    attempted.clear()
    with pytest.raises(NotBuilt):
        await retrying.get()
    assert not attempted.is_set()
    await retrying.close()


async def test_a_permanent_failure_ends_the_retries() -> None:
    calls = 0

    async def build() -> str:
        nonlocal calls
        calls += 1
        raise PermissionError("token refused")

    retrying = RetryingBuild(
        "thing",
        build,
        backoff=Backoff(first_s=0.001, max_s=0.001),
        permanent=lambda exc: "refused" if isinstance(exc, PermissionError) else None,
    )
    with pytest.raises(NotBuilt, match="failed for good"):
        await retrying.get()
    status = retrying.status()
    assert (status.state, status.detail, status.attempts) == (BuildState.FAILED, "refused", 1)
    with pytest.raises(NotBuilt):
        await retrying.get()
    assert calls == 1


async def test_closing_releases_whoever_waits() -> None:
    async def build() -> str:
        await asyncio.Event().wait()  # never finishes
        return "never"

    retrying = RetryingBuild("thing", build, backoff=NEVER_DUE)
    waiting = asyncio.ensure_future(retrying.get())
    await asyncio.sleep(0)
    await retrying.close()
    with pytest.raises(NotBuilt, match="shutdown"):
        await waiting
