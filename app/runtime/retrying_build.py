"""Build something at start-up, and keep trying until it is built.

One transient failure at start (a network blip, a credential lookup timing out, a
dependency not up yet) must not leave an instance answering nothing until it is restarted.
A `RetryingBuild` runs its build in the background and, when an attempt fails, logs it
once (with its traceback) and tries again after a back-off that doubles from 0.5 s up to
30 s: a broken dependency is asked a few times a minute, not hammered, and a short blip
heals within a second.

Whoever asks for the thing while an attempt is running waits for that attempt (a fresh
instance's first events wait for the first build, as before). Whoever asks between
attempts, after one failed, is told at once with `NotBuilt`: an event never sits out a
back-off in silence; the listener turns the failure into an apology in the thread, and
the next event after the build heals is served normally.

A failure the build's `permanent` predicate recognises (a refused token, say) ends the
retries: waiting would not change the answer.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, NoReturn, TypeVar, cast

from app.observability.logging import get_logger

log = get_logger(__name__)

T = TypeVar("T")

FIRST_RETRY_S = 0.5
MAX_RETRY_S = 30.0


@dataclass(frozen=True)
class Backoff:
    """How long to wait before each retry: `first_s`, doubling, capped at `max_s`."""

    first_s: float = FIRST_RETRY_S
    max_s: float = MAX_RETRY_S

    def delays(self) -> Iterator[float]:
        for n in itertools.count():
            delay = self.first_s * 2**n
            if delay >= self.max_s:
                break
            yield delay
        yield from itertools.repeat(self.max_s)


DEFAULT_BACKOFF = Backoff()


class BuildState(StrEnum):
    BUILDING = "building"  # the first attempt is running
    RETRYING = "retrying"  # an attempt failed; another one is running or due
    READY = "ready"
    FAILED = "failed"  # a permanent failure: no more attempts


@dataclass(frozen=True)
class BuildStatus:
    """What readiness reports about one build. Names an error's type, never its text
    (which may quote a URL, a key or a token)."""

    state: BuildState
    attempts: int  # attempts started so far
    error: str | None = None  # the type of the last failure, while not ready
    detail: str | None = None  # a short, safe description of a permanent failure

    @property
    def ready(self) -> bool:
        return self.state is BuildState.READY


class NotBuilt(Exception):
    """The thing is not built: its last attempt failed (and was logged, with its
    traceback, then). Raised without that cause, so that each event's own log line does
    not repeat the build's traceback."""


Permanent = Callable[[Exception], str | None]


def _never(_: Exception) -> str | None:
    return None


class RetryingBuild(Generic[T]):
    """`build` run in the background until it succeeds; `get()` hands out the result."""

    def __init__(
        self,
        name: str,
        build: Callable[[], Awaitable[T]],
        *,
        backoff: Backoff = DEFAULT_BACKOFF,
        permanent: Permanent = _never,
        on_built: Callable[[T], None] | None = None,
    ) -> None:
        """`name` prefixes the log lines (`{name}.failed`, `{name}.ready`). `permanent`
        returns a short, safe description for a failure not worth retrying, else None.
        `on_built` runs on the loop once the build has succeeded."""
        self.name = name
        self._build = build
        self._backoff = backoff
        self._permanent = permanent
        self._on_built = on_built
        self._task: asyncio.Task[None] | None = None
        # Resolves when the current attempt ends: True if it built the thing.
        self._attempt: asyncio.Future[bool] | None = None
        self._built = asyncio.Event()
        self._value: T | None = None
        self._attempts = 0
        self._error: str | None = None
        self._detail: str | None = None
        self._next_retry_s: float | None = None
        self._closed = False

    @classmethod
    def already(cls, name: str, value: T) -> RetryingBuild[T]:
        """A build that has nothing left to do (the value was built elsewhere)."""
        done: RetryingBuild[T] = cls(name, _unreachable)
        done._set(value)
        return done

    def start(self) -> None:
        """Start building in the background; returns at once. Idempotent."""
        if self._task is not None or self._built.is_set() or self._closed:
            return
        self._attempt = asyncio.get_running_loop().create_future()
        # A context of its own: a build started by an event must not log as that event.
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"{self.name}.build", context=contextvars.Context()
        )

    @property
    def value(self) -> T | None:
        """The built thing, or None while it is not built."""
        return self._value

    def status(self) -> BuildStatus:
        if self._built.is_set():
            return BuildStatus(BuildState.READY, self._attempts)
        if self._detail is not None:
            return BuildStatus(BuildState.FAILED, self._attempts, self._error, self._detail)
        state = BuildState.RETRYING if self._error is not None else BuildState.BUILDING
        return BuildStatus(state, self._attempts, self._error)

    async def get(self) -> T:
        """The thing: at once when built; after the attempt in progress, if any; else (an
        attempt failed, the next is not due yet) `NotBuilt` at once."""
        if self._built.is_set():
            return self._built_value()
        self.start()
        attempt = self._attempt
        if attempt is None:  # closed before it ever started
            raise NotBuilt(self._describe_failure())
        if not attempt.done():
            await asyncio.shield(attempt)
        if self._built.is_set():
            return self._built_value()
        raise NotBuilt(self._describe_failure())

    async def wait_built(self) -> T:
        """The thing, however many attempts it takes (for a build that depends on it)."""
        self.start()
        await self._built.wait()
        return self._built_value()

    async def close(self) -> None:
        """Stop retrying (at shutdown). What was built stays; its owner closes it."""
        self._closed = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._attempt is not None and not self._attempt.done():
            self._attempt.set_result(False)  # whoever waits for it is told, not left hanging

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        delays = self._backoff.delays()
        while True:
            assert self._attempt is not None
            self._attempts += 1
            try:
                value = await self._build()
            except Exception as exc:
                retry = self._failed(exc, delays)
                self._attempt.set_result(False)
                if not retry:
                    return
                assert self._next_retry_s is not None
                await asyncio.sleep(self._next_retry_s)
                self._attempt = loop.create_future()
                continue
            self._set(value)
            self._attempt.set_result(True)
            log.info(f"{self.name}.ready", attempts=self._attempts)
            if self._on_built is not None:
                try:
                    self._on_built(value)
                except Exception as exc:  # built all the same: what follows is extra
                    log.error(f"{self.name}.on_built_failed", exc_info=exc)
            return

    def _failed(self, exc: Exception, delays: Iterator[float]) -> bool:
        """Log the failed attempt once; True when another attempt follows."""
        self._error = type(exc).__name__
        detail = self._permanent(exc)
        if detail is not None:
            self._detail, self._next_retry_s = detail, None
            log.error(
                f"{self.name}.failed",
                attempt=self._attempts,
                error=self._error,
                reason=detail,
                retry_in_s=None,
                exc_info=exc,
            )
            return False
        self._next_retry_s = next(delays)
        log.error(
            f"{self.name}.failed",
            attempt=self._attempts,
            error=self._error,
            retry_in_s=self._next_retry_s,
            exc_info=exc,
        )
        return True

    def _built_value(self) -> T:
        # Called only once `_built` is set, i.e. after `_set` stored a T. `_value` is
        # Optional only before that; a T may itself be None, so no `is not None` check.
        return cast(T, self._value)

    def _set(self, value: T) -> None:
        self._value = value
        self._error = self._detail = self._next_retry_s = None
        self._built.set()

    def _describe_failure(self) -> str:
        if self._closed:
            return f"{self.name} was not built before shutdown"
        if self._detail is not None:
            return f"{self.name} failed for good ({self._detail})"
        return (
            f"{self.name} is not built: attempt {self._attempts} failed ({self._error});"
            f" the next one starts {self._next_retry_s} s after it"
        )


async def _unreachable() -> NoReturn:
    raise AssertionError("an already built RetryingBuild never builds")
