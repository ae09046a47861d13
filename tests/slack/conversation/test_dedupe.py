"""Which delivery of a Slack event Orion answers: the first to claim it in the shared store,
on whichever instance; Slack's retries and the other instances drop it. And what happens
when the store cannot be reached: Orion answers (at worst twice) rather than drop the
person's message.

Each "instance" is built the way production builds one (`build_storage`, `build_services`,
`ServiceProvider`), with its own client of the test's store (a directory, or a bucket on
the GCS emulator), as each Cloud Run instance has its own client of the shared bucket.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from slack_bolt.adapter.socket_mode.internals import build_headers
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.socket_mode.request import SocketModeRequest

from app.config import Settings
from app.services import ServiceProvider, build_services, build_storage
from app.slack.conversation.dedupe import EventDeduplicator, is_retried_delivery
from app.storage.breaker import PROBE_KEY, GuardedStore
from app.storage.deadline import storage_deadline
from app.storage.store import ObjectStore
from tests.backends import OTHER_USER, USER, Backend
from tests.fakes import slack_events as events
from tests.fakes._waiting import wait_until_async
from tests.fakes.fault_proxy import FaultyProxy, ProxiedRequest

CHANNEL, THREAD_TS = "D0DEDUPE", "1712345678.123456"
# The storage budget the listeners give the claim (MEMORY_LOAD_TIMEOUT_S), short here so a
# claim against a bucket that is down gives up quickly.
OUTAGE_BUDGET_S = 0.5


@dataclass
class Instance:
    dedupe: EventDeduplicator
    store: ObjectStore  # this instance's own client of the shared store


@asynccontextmanager
async def orion_instance(
    *, bucket: str | None = None, directory: Path | None = None
) -> AsyncIterator[Instance]:
    values: dict[str, Any] = {
        "slack_bot_token": "xoxb-test-bot-token",
        "anthropic_api_key": "sk-ant-test-key",
        "gcs_memories_bucket": bucket,
    }
    if directory is not None:
        values["memory_dir"] = directory
    settings = Settings(_env_file=None, **values)  # type: ignore[call-arg]
    storage = build_storage(settings)
    await storage.store.connect()  # as the start does, before the first event
    provider = ServiceProvider(build_services(settings, storage))
    try:
        yield Instance(EventDeduplicator(provider), storage.store)
    finally:
        await provider.close()


def instance_on(backend: Backend) -> AbstractAsyncContextManager[Instance]:
    return orion_instance(bucket=backend.bucket, directory=backend.directory)


def message_event() -> dict[str, Any]:
    """A person's message in a thread, as Slack delivers it (and delivers it again)."""
    return events.user_message_in_thread(USER, CHANNEL, THREAD_TS, "Can you summarise this?")


def prompts_claim(user: str, day: str) -> str:
    """What the Messages-tab listener asks `first_time` about: once per person and day."""
    return f"Prompts{user}{day}"


def claims(backend: Backend) -> list[str]:
    return [name for name in backend.raw_names() if name.startswith("events/")]


# --- deliveries of one event ------------------------------------------------------------------


async def test_the_first_delivery_of_an_event_is_answered_and_leaves_its_claim(
    backend: Backend,
) -> None:
    event = message_event()
    async with instance_on(backend) as orion:
        assert not orion.dedupe.seen_here(event)
        assert not await orion.dedupe.is_duplicate(event), "the first delivery is answered"

    assert claims(backend) == [f"events/{event['event_id']}"]
    claim = json.loads(backend.raw_read(f"events/{event['event_id']}") or "{}")
    assert claim["instance"] and abs(claim["claimed_at"] - time.time()) < 60


async def test_slacks_retry_reaching_the_same_instance_is_dropped_before_any_storage_work(
    backend: Backend,
) -> None:
    event = message_event()
    async with instance_on(backend) as orion:
        assert not await orion.dedupe.is_duplicate(event)

        # The listeners check this first, before showing a status or reading memory.
        assert orion.dedupe.seen_here(event)
        assert await orion.dedupe.is_duplicate(event)

    assert claims(backend) == [f"events/{event['event_id']}"]


async def test_slacks_retry_reaching_another_instance_loses_to_the_first_delivery(
    backend: Backend,
) -> None:
    event = message_event()
    async with instance_on(backend) as first, instance_on(backend) as second:
        assert not await first.dedupe.is_duplicate(event)

        assert not second.dedupe.seen_here(event), "only the shared store knows"
        assert await second.dedupe.is_duplicate(event), "the retry is dropped"


async def test_two_instances_racing_for_the_same_events_answer_each_exactly_once(
    backend: Backend,
) -> None:
    deliveries = [message_event() for _ in range(8)]
    async with instance_on(backend) as one, instance_on(backend) as two:
        results = await asyncio.gather(
            *(orion.dedupe.is_duplicate(event) for event in deliveries for orion in (one, two))
        )

    # Per event: (one's verdict, two's verdict); exactly one of them answers.
    for n, event in enumerate(deliveries):
        verdicts = results[2 * n : 2 * n + 2]
        assert sorted(verdicts) == [False, True], f"event {event['event_id']}: {verdicts}"
    assert len(claims(backend)) == len(deliveries)


async def test_a_delivery_without_an_event_id_is_always_handled_and_claims_nothing(
    backend: Backend,
) -> None:
    # Not an Events API delivery (e.g. a button click): Slack does not retry it.
    click = {"type": "block_actions", "user": {"id": USER}}
    async with instance_on(backend) as orion:
        assert not await orion.dedupe.is_duplicate(click)
        assert not await orion.dedupe.is_duplicate(click)

    assert backend.raw_names() == []


async def test_an_event_id_that_is_not_slacks_never_becomes_a_key_in_the_store(
    backend: Backend,
) -> None:
    forged = {**message_event(), "event_id": "../users/U0123ABCD/preferences.json"}
    async with instance_on(backend) as orion:
        assert not await orion.dedupe.is_duplicate(forged), "answered, not claimed"

    assert backend.raw_names() == []


# --- first_time: once per key, across instances -----------------------------------------------


async def test_the_messages_tab_prompts_are_offered_once_per_person_and_day_across_instances(
    backend: Backend,
) -> None:
    async with instance_on(backend) as one, instance_on(backend) as two:
        assert await one.dedupe.first_time(prompts_claim(USER, "20240501"))
        assert not await one.dedupe.first_time(prompts_claim(USER, "20240501")), "same instance"
        assert not await two.dedupe.first_time(prompts_claim(USER, "20240501")), "other instance"

        assert await two.dedupe.first_time(prompts_claim(OTHER_USER, "20240501")), "someone else"
        assert await two.dedupe.first_time(prompts_claim(USER, "20240502")), "the next day"
        assert not await one.dedupe.first_time(prompts_claim(USER, "20240502"))

    assert len(claims(backend)) == 3


# --- Slack's mark on a redelivery -------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "retried"),
    [
        ({}, False),
        ({"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}, True),
        ({"X-Slack-Retry-Num": "3", "X-Slack-Retry-Reason": "http_error"}, True),
        ({"X-Slack-Retry-Num": "0"}, False),
    ],
    ids=["first", "first-retry", "third-retry", "zero"],
)
def test_an_http_delivery_is_a_retry_only_when_slack_numbers_it(
    headers: dict[str, str], retried: bool
) -> None:
    request = AsyncBoltRequest(body=json.dumps(message_event()), headers=headers)

    assert is_retried_delivery(request) is retried


@pytest.mark.parametrize(("attempt", "retried"), [(None, False), (0, False), (1, True), (2, True)])
def test_a_socket_mode_envelope_is_a_retry_only_from_its_first_retry_attempt(
    attempt: int | None, retried: bool
) -> None:
    # Slack numbers a Socket Mode envelope's first delivery 0; Bolt turns it into the header.
    envelope = SocketModeRequest(
        type="events_api",
        envelope_id="env-1",
        payload=message_event(),
        retry_attempt=attempt,
        retry_reason=None if not attempt else "timeout",
    )
    request = AsyncBoltRequest(
        mode="socket_mode", body=envelope.payload, headers=build_headers(envelope)
    )

    assert is_retried_delivery(request) is retried


# --- the bucket is down ------------------------------------------------------------------------


def _not_probes(proxy: FaultyProxy) -> list[ProxiedRequest]:
    probe = PROBE_KEY.replace("/", "%2F")
    return [r for r in proxy.requests if probe not in r.path_qs]


def _breaker(instance: Instance) -> GuardedStore:
    assert isinstance(instance.store, GuardedStore), "production puts the bucket behind one"
    return instance.store


async def test_with_the_bucket_down_messages_are_answered_and_later_claims_skip_it(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    async with orion_instance(bucket=gcs_bucket) as orion:
        breaker = _breaker(orion)
        gcs_proxy.add_rule("", status=503)
        first = message_event()

        with storage_deadline(OUTAGE_BUDGET_S):
            assert not await orion.dedupe.is_duplicate(first), "answered despite the outage"
        await wait_until_async(lambda: not breaker.available, what="the breaker opening")
        sent = len(_not_probes(gcs_proxy))

        # While it is open: answered at once, prompts still offered, the bucket not asked.
        with storage_deadline(OUTAGE_BUDGET_S):
            assert not await orion.dedupe.is_duplicate(message_event())
            assert await orion.dedupe.first_time(prompts_claim(USER, "20240501"))
            assert not await orion.dedupe.first_time(prompts_claim(USER, "20240501")), "once"
        assert len(_not_probes(gcs_proxy)) == sent, "nothing was sent to the bucket"
        # Slack's retry of the first event, to this instance: still answered only once here.
        assert await orion.dedupe.is_duplicate(first)


async def test_during_an_outage_a_retry_on_another_instance_is_answered_and_claims_resume_after(
    gcs_proxy: FaultyProxy, gcs_bucket: str
) -> None:
    async with orion_instance(bucket=gcs_bucket) as one, orion_instance(bucket=gcs_bucket) as two:
        gcs_proxy.add_rule("", status=503)
        event = message_event()

        with storage_deadline(OUTAGE_BUDGET_S):
            assert not await one.dedupe.is_duplicate(event)
        with storage_deadline(OUTAGE_BUDGET_S):
            # Nobody could record the first delivery: at worst twice, never dropped.
            assert not await two.dedupe.is_duplicate(event)
        await wait_until_async(
            lambda: not _breaker(one).available and not _breaker(two).available,
            what="both instances noticing the outage",
        )

        gcs_proxy.clear_rules()
        await wait_until_async(
            lambda: _breaker(one).available and _breaker(two).available,
            what="both instances seeing the bucket back",
        )
        later = message_event()
        assert not await one.dedupe.is_duplicate(later)
        assert await two.dedupe.is_duplicate(later), "deduplication is back with the bucket"
