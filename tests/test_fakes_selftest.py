"""The fakes in tests/fakes/ behave like the real services, as seen by the real SDK clients.

If one of these fails, every other test's verdict is suspect: fix the fake first.
"""

from __future__ import annotations

import asyncio
import io
import random
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anthropic
import httpx2
import pytest
from anthropic import AsyncAnthropic
from google.api_core import exceptions as gcs_errors
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.context.say.async_say import AsyncSay
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_bolt.request import payload_utils
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.models.blocks.block_elements import UrlSourceElement
from slack_sdk.models.messages.chunk import PlanUpdateChunk, TaskUpdateChunk
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes import claude_script as script
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.claude_script import text as text_reply
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.gcs import GcsEmulator
from tests.fakes.latency_link import LatencyLink
from tests.fakes.slack_api import FakeSlack

BOT_TOKEN = "xoxb-1-test"
APP_TOKEN = "xapp-1-A1-1-test"
USER = "U1"
DM = "D1"
MODEL = "claude-sonnet-test"
HELLO = [{"role": "user", "content": "hello there"}]
MEMORY_TOOL: Any = {"type": "memory_20250818", "name": "memory"}


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    with FakeSlack(socket_mode=True) as fake:
        yield fake


@pytest.fixture(scope="module")
def shared_claude() -> Iterator[FakeClaude]:
    with FakeClaude() as fake:
        yield fake


@pytest.fixture
def claude(shared_claude: FakeClaude) -> FakeClaude:
    shared_claude.reset()
    return shared_claude


@pytest.fixture(scope="module")
async def claude_client(shared_claude: FakeClaude) -> AsyncIterator[AsyncAnthropic]:
    # One client for the module: building one costs ~50 ms (TLS context), even for http://.
    client = AsyncAnthropic(base_url=shared_claude.url, api_key="test", max_retries=0)
    yield client
    await client.close()


def web_client(fake: FakeSlack, token: str = BOT_TOKEN, **kwargs: Any) -> AsyncWebClient:
    return AsyncWebClient(token=token, base_url=fake.url, **kwargs)


def gcs_client(url: str) -> storage.Client:
    return storage.Client(
        project="orion-test",
        credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
        client_options={"api_endpoint": url},
    )


# --- FakeSlack ---


async def test_posted_and_streamed_replies_appear_in_the_thread(slack: FakeSlack) -> None:
    client = web_client(slack)
    thread_ts = slack.add_user_message(DM, None, USER, "hi")

    await client.chat_postMessage(channel=DM, thread_ts=thread_ts, text="Looking…")
    stream = await client.chat_stream(
        channel=DM,
        thread_ts=thread_ts,
        recipient_team_id="T1",
        recipient_user_id=USER,
        buffer_size=8,
    )
    for piece in ["Hello, ", "this is ", "a **streamed** ", "answer."]:
        await stream.append(markdown_text=piece)
    assert slack.finished_bot_messages(DM) == 1, "the stream is not finished yet"
    feedback = [{"type": "context", "elements": [{"type": "mrkdwn", "text": "ok?"}]}]
    await stream.stop(markdown_text=" Bye.", blocks=feedback)

    user, first, streamed = slack.thread(DM, thread_ts)
    assert (user.user, user.text) == (USER, "hi")
    assert (first.user, first.bot_id, first.text) == ("UBOT", "BBOT", "Looking…")
    assert streamed.text == "Hello, this is a **streamed** answer. Bye."
    assert not streamed.streaming
    assert streamed.blocks == feedback
    assert slack.finished_bot_messages(DM) == 2
    assert float(user.ts) < float(first.ts) < float(streamed.ts)
    # slack_sdk's ChatStream sends text only as `chunks`, all three stream methods as JSON.
    assert slack.calls_to("chat.appendStream")
    assert all("chunks" in c.args for c in slack.calls_to("chat.appendStream"))


async def test_slack_sdk_task_chunks_show_as_tasks_and_a_workspace_can_refuse_them(
    slack: FakeSlack,
) -> None:
    client = web_client(slack)
    thread_ts = slack.add_user_message(DM, None, USER, "hi")
    source = UrlSourceElement(url="https://x.slack.com/archives/D1/p1", text="Earlier")
    stream = await client.chat_stream(
        channel=DM,
        thread_ts=thread_ts,
        recipient_team_id="T1",
        recipient_user_id=USER,
        task_display_mode="plan",
    )
    await stream.append(chunks=[TaskUpdateChunk(id="a", title="Search", status="in_progress")])
    await stream.append(markdown_text="Found it.", chunks=[PlanUpdateChunk(title="Plan")])
    done = TaskUpdateChunk(id="a", title="Search", status="complete", sources=[source])
    await stream.stop(chunks=[done])

    [message] = slack.bot_messages(DM, thread_ts)
    assert message.text == "Found it." and message.task_display_mode == "plan"
    [task] = slack.tasks(DM, thread_ts)
    assert (task.id, task.status, task.statuses) == ("a", "complete", ["in_progress", "complete"])
    assert task.sources == [
        {"type": "url", "url": "https://x.slack.com/archives/D1/p1", "text": "Earlier"}
    ]

    # Beyond Slack's limits, or in a workspace without the display, the call is refused.
    too_long = TaskUpdateChunk(id="b", title="x" * 257, status="complete")
    with pytest.raises(SlackApiError):
        await client.chat_startStream(channel=DM, thread_ts=thread_ts, chunks=[too_long])
    slack.refuse_task_display("invalid_arguments")
    with pytest.raises(SlackApiError) as refused:
        await client.chat_startStream(
            channel=DM,
            thread_ts=thread_ts,
            chunks=[TaskUpdateChunk(id="c", title="t", status="pending")],
        )
    assert refused.value.response["error"] == "invalid_arguments"
    assert (await client.chat_startStream(channel=DM, thread_ts=thread_ts, markdown_text="ok"))[
        "ok"
    ]


async def test_replies_carry_metadata_only_when_asked(slack: FakeSlack) -> None:
    client = web_client(slack)
    thread_ts = slack.open_assistant_thread(DM)
    metadata = {"event_type": "assistant_thread_context", "event_payload": {"channel_id": "C9"}}
    await client.chat_postMessage(channel=DM, thread_ts=thread_ts, text="hi", metadata=metadata)

    with_meta = await client.conversations_replies(
        channel=DM, ts=thread_ts, include_all_metadata=True
    )
    without = await client.conversations_replies(channel=DM, ts=thread_ts)

    root, reply = with_meta["messages"]
    assert root["subtype"] == "assistant_app_thread"
    assert reply["metadata"] == metadata and reply["user"] == "UBOT" and reply["blocks"]
    assert "metadata" not in without["messages"][1]
    assert [m.text for m in slack.thread(DM, thread_ts)] == ["hi"]  # the root is not shown


async def test_replies_paginate_with_cursor(slack: FakeSlack) -> None:
    client = web_client(slack)
    thread_ts = slack.add_user_message(DM, None, USER, "root")
    for n in range(4):
        slack.add_user_message(DM, thread_ts, USER, f"m{n}")
    first = await client.conversations_replies(channel=DM, ts=thread_ts, limit=3)
    cursor = first["response_metadata"]["next_cursor"]
    second = await client.conversations_replies(channel=DM, ts=thread_ts, limit=3, cursor=cursor)
    texts = [m["text"] for m in first["messages"] + second["messages"]]
    assert texts == ["root", "m0", "m1", "m2", "m3"]
    assert first["has_more"] and not second["has_more"]


async def test_history_reads_can_be_limited_as_for_a_non_marketplace_app(
    slack: FakeSlack,
) -> None:
    client = web_client(slack)
    thread_ts = slack.add_user_message(DM, None, USER, "root")
    for n in range(40):
        slack.add_user_message(DM, thread_ts, USER, f"m{n}")
    slack.limit_history_reads()

    first = await client.conversations_replies(channel=DM, ts=thread_ts, limit=200)
    with pytest.raises(SlackApiError) as limited:
        await client.conversations_replies(channel=DM, ts=thread_ts, limit=200)
    history = await client.conversations_history(channel=DM)  # each method on its own
    slack.minute_passes()
    cursor = first["response_metadata"]["next_cursor"]
    second = await client.conversations_replies(channel=DM, ts=thread_ts, cursor=cursor)

    assert len(first["messages"]) == 15 and first["has_more"], "15 a call, whatever is asked"
    assert limited.value.response.status_code == 429
    assert limited.value.response["error"] == "ratelimited"
    assert 0 < int(limited.value.response.headers["Retry-After"]) <= 60
    assert len(history["messages"]) == 1
    assert [m["text"] for m in second["messages"]][:2] == ["m14", "m15"]
    assert len(second["messages"]) == 15
    [asked, *_] = slack.calls_to("conversations.replies")
    assert asked.args["limit"] in (200, "200"), "recorded as Orion asked"


async def test_rate_limit_is_retried_by_the_sdk_handler(
    slack: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The handler sleeps Retry-After + random() seconds: pin the jitter to keep this quick.
    monkeypatch.setattr(random, "random", lambda: 0.0)
    client = web_client(slack, retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=1)])
    slack.inject_error("chat.postMessage", error="ratelimited", status=429, retry_after=0)

    await client.chat_postMessage(channel=DM, text="eventually")

    assert [c.error for c in slack.calls_to("chat.postMessage")] == ["ratelimited", None]
    assert [m.text for m in slack.messages(DM)] == ["eventually"]


async def test_expired_stream_refuses_appends_and_chat_update_recovers(slack: FakeSlack) -> None:
    client = web_client(slack)
    thread_ts = slack.add_user_message(DM, None, USER, "hi")
    stream = await client.chat_stream(channel=DM, thread_ts=thread_ts, buffer_size=1)
    await stream.append(markdown_text="partial")
    slack.expire_streams()

    with pytest.raises(SlackApiError) as raised:
        await stream.append(markdown_text=" more")
    assert raised.value.response["error"] == "message_not_in_streaming_state"
    assert stream.ts is not None
    await client.chat_update(channel=DM, ts=stream.ts, text="partial more")

    [reply] = slack.bot_messages(DM, thread_ts)
    assert (reply.text, reply.streaming) == ("partial more", False)


async def test_injected_errors_can_persist_until_cleared(slack: FakeSlack) -> None:
    client = web_client(slack)
    thread_ts = slack.add_user_message(DM, None, USER, "hi")
    started = await client.chat_startStream(channel=DM, thread_ts=thread_ts, markdown_text="a")
    slack.inject_error(
        "chat.appendStream", error="message_not_in_streaming_state", status=200, times=None
    )
    for _ in range(2):
        with pytest.raises(SlackApiError) as raised:
            await client.chat_appendStream(channel=DM, ts=started["ts"], markdown_text="b")
        assert raised.value.response.status_code == 200
    slack.clear_errors()
    await client.chat_appendStream(channel=DM, ts=started["ts"], markdown_text="c")

    [reply] = slack.bot_messages(DM, thread_ts)
    assert (reply.text, reply.streaming) == ("ac", True)


async def test_tokens_are_checked(slack: FakeSlack) -> None:
    with pytest.raises(SlackApiError) as no_token:
        await AsyncWebClient(base_url=slack.url).chat_postMessage(channel=DM, text="x")
    with pytest.raises(SlackApiError) as app_token:
        await web_client(slack, token=APP_TOKEN).chat_postMessage(channel=DM, text="x")
    assert no_token.value.response["error"] == "not_authed"
    assert app_token.value.response["error"] == "not_allowed_token_type"
    assert slack.messages() == []


async def test_assistant_thread_chrome_is_recorded(slack: FakeSlack) -> None:
    client = web_client(slack)
    thread_ts = slack.open_assistant_thread(DM)
    await client.assistant_threads_setStatus(
        channel_id=DM, thread_ts=thread_ts, status="is thinking…", loading_messages=["Hmm", "Ah"]
    )
    prompts = [{"title": "Plan", "message": "Plan my day"}]
    await client.assistant_threads_setSuggestedPrompts(
        channel_id=DM, thread_ts=thread_ts, prompts=prompts, title="Try"
    )
    await client.assistant_threads_setTitle(channel_id=DM, thread_ts=thread_ts, title="Day plan")
    assert slack.current_status(DM, thread_ts) == "is thinking…"

    await client.chat_postMessage(channel=DM, thread_ts=thread_ts, text="Done")

    [status] = slack.statuses(DM, thread_ts)
    assert (status.status, status.loading_messages) == ("is thinking…", ["Hmm", "Ah"])
    assert slack.suggested_prompts(DM, thread_ts)[-1].prompts == prompts
    assert slack.titles(DM, thread_ts) == ["Day plan"]
    assert slack.current_status(DM, thread_ts) == ""  # Slack clears it when the bot replies


async def test_a_home_view_over_slacks_block_limit_is_refused(slack: FakeSlack) -> None:
    divider = {"type": "divider"}
    client = web_client(slack)
    await client.views_publish(user_id=USER, view={"type": "home", "blocks": [divider] * 100})
    with pytest.raises(SlackApiError) as refused:
        await client.views_publish(user_id=USER, view={"type": "home", "blocks": [divider] * 101})
    assert refused.value.response["error"] == "invalid_arguments"
    assert len(slack.home_views(USER)) == 1


async def test_a_message_section_over_slacks_text_limit_is_refused(slack: FakeSlack) -> None:
    def section(chars: int) -> list[dict[str, Any]]:
        return [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * chars}}]

    client = web_client(slack)
    await client.chat_postMessage(channel=DM, text="fits", blocks=section(3_000))
    await client.chat_postEphemeral(channel=DM, user=USER, text="fits", blocks=section(3_000))
    for post in (
        client.chat_postMessage(channel=DM, text="too long", blocks=section(3_001)),
        client.chat_postEphemeral(channel=DM, user=USER, text="too long", blocks=section(3_001)),
    ):
        with pytest.raises(SlackApiError) as refused:
            await post
        assert refused.value.response["error"] == "invalid_blocks"


def test_wait_for_refuses_to_block_an_event_loop(slack: FakeSlack) -> None:
    async def misuse() -> None:
        slack.wait_for(lambda: True)

    with pytest.raises(RuntimeError, match="_async"):
        asyncio.run(misuse())
    assert slack.wait_for(lambda: 42) == 42


async def test_socket_mode_round_trip_with_bolt(slack: FakeSlack) -> None:
    assert slack.socket_mode is not None
    server = slack.socket_mode
    app = AsyncApp(client=web_client(slack), signing_secret="unused-over-socket-mode")
    assistant = AsyncAssistant()

    @assistant.thread_started
    async def greet(say: AsyncSay) -> None:
        await say("Hello from Orion")

    app.assistant(assistant)
    handler = AsyncSocketModeHandler(app, app_token=APP_TOKEN)
    await handler.connect_async()
    try:
        await server.wait_connected_async()
        thread_ts = slack.open_assistant_thread(DM)
        envelope_id = server.send_events_api(
            events.assistant_thread_started(USER, DM, thread_ts, {"channel_id": "C1"})
        )

        ack = await server.wait_ack_async(envelope_id)
        [reply] = await slack.wait_for_async(lambda: slack.bot_messages(DM, thread_ts))
    finally:
        await handler.close_async()

    assert ack["envelope_id"] == envelope_id
    assert reply.text == "Hello from Orion"
    assert reply.metadata is not None
    assert reply.metadata["event_type"] == "assistant_thread_context"
    assert server.connections_opened == 1


# --- Slack event payloads ---


def test_event_payloads_match_what_bolt_recognises() -> None:
    started = events.assistant_thread_started(USER, DM, "1.000001")
    in_thread = events.user_message_in_thread(USER, DM, "1.000001", "hi")
    top_level = events.top_level_dm(USER, DM, "hi")
    bot_echo = events.bot_message_in_thread(DM, "1.000001", "hello")

    assert payload_utils.is_assistant_thread_started_event(started)
    assert payload_utils.is_assistant_thread_context_changed_event(
        events.assistant_thread_context_changed(USER, DM, "1.000001")
    )
    assert payload_utils.is_user_message_event_in_assistant_thread(in_thread)
    assert not payload_utils.is_assistant_event(top_level)
    assert payload_utils.is_bot_message_event_in_assistant_thread(bot_echo)
    assert started["event_id"] != in_thread["event_id"]


def test_signatures_verify_with_the_sdk() -> None:
    body = events.json_body(events.url_verification("abc"))
    headers = events.sign(body, "shh")
    verifier = SignatureVerifier("shh")
    assert verifier.is_valid_request(body, headers)
    assert not SignatureVerifier("other").is_valid_request(body, headers)

    form = events.form_body(events.block_actions(USER, DM, "1.000002", "feedback", "good"))
    assert form.startswith(b"payload=%7B")
    assert verifier.is_valid_request(form, events.signed_headers(form, "shh"))


# --- FakeClaude ---


async def test_claude_json_reply_and_default_echo(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    claude.reply("Scripted answer")
    scripted = await claude_client.messages.create(model=MODEL, max_tokens=64, messages=HELLO)
    echoed = await claude_client.messages.create(model=MODEL, max_tokens=64, messages=HELLO)

    assert scripted.content[0].type == "text" and scripted.content[0].text == "Scripted answer"
    assert scripted.model == MODEL and scripted.stop_reason == "end_turn"
    assert scripted.usage.input_tokens > 0 and scripted.usage.output_tokens > 0
    assert echoed.content[0].type == "text"
    assert echoed.content[0].text == "(fake claude) you said: hello there"
    assert claude.requests[0]["messages"] == HELLO
    assert claude.calls[0].headers["Authorization"] == "Bearer test"


def _search_result_exchange(search_result: dict[str, Any]) -> list[dict[str, Any]]:
    """A question, a recall call, and its result holding `search_result`."""
    call = {"type": "tool_use", "id": "toolu_1", "name": "recall", "input": {"query": "x"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": [search_result]}
    return [
        *HELLO,
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [result]},
    ]


async def test_claude_cites_search_results_and_refuses_malformed_ones(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    source = "https://orion-test.slack.com/archives/D0MIRA/p1770000000000100"
    found = {
        "type": "search_result",
        "source": source,
        "title": "Offsite (2026-05-01)",
        "content": [{"type": "text", "text": "The person: our puppy Biscuit."}],
        "citations": {"enabled": True},
    }
    claude.enqueue(script.cited("It's Biscuit.", source, "Offsite", "Biscuit"))
    messages = _search_result_exchange(found)
    async with claude_client.messages.stream(model=MODEL, max_tokens=64, messages=messages) as s:
        final = await s.get_final_message()
    [block] = final.content
    assert block.type == "text" and block.text == "It's Biscuit."
    [citation] = block.citations or []
    assert citation.type == "search_result_location" and citation.source == source

    for broken in ({"source": ""}, {"content": []}, {"citations": {"enabled": "yes"}}):
        with pytest.raises(anthropic.BadRequestError):
            await claude_client.messages.create(
                model=MODEL, max_tokens=64, messages=_search_result_exchange(found | broken)
            )


async def test_claude_refuses_what_api_version_2026_10_21_removed(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    """The SDK sends 2026-10-21: sampling parameters (even at their defaults), an assistant's
    `document` block and a user's cited text are 400s there, and pass under 2023-06-01."""
    cited = {
        "type": "text",
        "text": "It's Biscuit.",
        "citations": [{"type": "char_location", "cited_text": "Biscuit"}],
    }
    document = {"type": "document", "source": {"type": "text", "data": "x"}}
    result = {
        "type": "search_result",
        "source": "conversation 1",
        "title": "Offsite",
        "content": [cited],
    }
    refused: list[dict[str, Any]] = [
        {"messages": HELLO, "extra_body": {"temperature": 1.0}},
        {"messages": HELLO, "extra_body": {"top_k": 5}},
        {"messages": [*HELLO, {"role": "assistant", "content": [document]}, *HELLO]},
        {"messages": [{"role": "user", "content": [cited]}]},
        {"messages": _search_result_exchange(result)},
    ]
    for extra in refused:
        with pytest.raises(anthropic.BadRequestError):
            await claude_client.messages.create(model=MODEL, max_tokens=64, **extra)
        older = {"anthropic-version": "2023-06-01"}
        await claude_client.messages.create(
            model=MODEL, max_tokens=64, extra_headers=older, **extra
        )
    assert claude.calls[0].headers["anthropic-version"] == "2026-10-21"


async def test_claude_streams_text(claude: FakeClaude, claude_client: AsyncAnthropic) -> None:
    claude.reply("one two three four five six seven eight")
    async with claude_client.messages.stream(model=MODEL, max_tokens=64, messages=HELLO) as s:
        deltas = [delta async for delta in s.text_stream]
        final = await s.get_final_message()

    assert len(deltas) > 1
    assert "".join(deltas) == "one two three four five six seven eight"
    assert final.content[0].type == "text"
    assert final.content[0].text == "".join(deltas)
    assert final.stop_reason == "end_turn"
    assert claude.requests[0]["stream"] is True


async def test_claude_keeps_a_models_pace_and_notes_its_first_text(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    answer = "Sonnet writes about twenty-four characters at a time, every eighty ms."
    claude.reply(answer, chunk_delay=0.001, delta_chars=24)
    async with claude_client.messages.stream(model=MODEL, max_tokens=64, messages=HELLO) as s:
        deltas = [delta async for delta in s.text_stream]

    assert "".join(deltas) == answer
    assert [len(d) for d in deltas] == [24, 24, len(answer) - 48]
    [first] = claude.first_texts
    assert first.body["messages"] == HELLO


async def test_claude_streams_memory_tool_use_on_the_beta_client(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    command = {"command": "create", "path": "/memories/users/U1/notes.md", "file_text": "likes tea"}
    tool_id = claude.reply_tool_use("memory", command, text="Noting that.")
    async with claude_client.beta.messages.stream(
        model=MODEL,
        max_tokens=64,
        messages=HELLO,
        tools=[MEMORY_TOOL],
        betas=["context-management-2025-06-27"],
    ) as s:
        final = await s.get_final_message()

    text_block, tool_block = final.content
    assert text_block.type == "text" and text_block.text == "Noting that."
    assert tool_block.type == "tool_use"
    assert (tool_block.id, tool_block.name, tool_block.input) == (tool_id, "memory", command)
    assert final.stop_reason == "tool_use"
    assert claude.calls[0].betas == ("context-management-2025-06-27",)
    assert claude.requests[0]["tools"] == [MEMORY_TOOL]


async def test_claude_tool_use_json_and_responder(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    claude.responder = lambda body: text_reply("summary") if body["model"] == "small" else None
    claude.reply_tool_use("memory", {"command": "view", "path": "/memories"})

    summary = await claude_client.messages.create(model="small", max_tokens=8, messages=HELLO)
    main = await claude_client.messages.create(
        model=MODEL, max_tokens=64, messages=HELLO, tools=[MEMORY_TOOL]
    )

    assert summary.content[0].type == "text" and summary.content[0].text == "summary"
    assert main.content[0].type == "tool_use"
    assert main.content[0].input == {"command": "view", "path": "/memories"}
    assert claude.pending == 0


@pytest.mark.parametrize(
    ("status", "error_type", "exception"),
    [
        (529, "overloaded_error", anthropic.OverloadedError),
        (429, "rate_limit_error", anthropic.RateLimitError),
        (500, "api_error", anthropic.InternalServerError),
    ],
)
async def test_claude_http_errors_raise_the_sdk_exceptions(
    claude: FakeClaude,
    claude_client: AsyncAnthropic,
    status: int,
    error_type: str,
    exception: type[anthropic.APIStatusError],
) -> None:
    claude.fail(status, error_type, "nope", retry_after=0.01)
    with pytest.raises(exception) as raised:
        await claude_client.messages.create(model=MODEL, max_tokens=8, messages=HELLO)
    assert raised.value.status_code == status
    assert raised.value.type == error_type
    if status == 429:
        assert raised.value.response.headers["retry-after"] == "0.01"


async def test_claude_sdk_retries_recover(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    client = claude_client.with_options(max_retries=2)
    claude.fail(429, "rate_limit_error", "slow down", retry_after=0.01)
    claude.reply("after retry")
    reply = await client.messages.create(model=MODEL, max_tokens=8, messages=HELLO)
    assert reply.content[0].type == "text" and reply.content[0].text == "after retry"
    assert len(claude.requests) == 2


async def test_claude_error_mid_stream(claude: FakeClaude, claude_client: AsyncAnthropic) -> None:
    claude.fail_mid_stream("Half an ans")
    received: list[str] = []
    with pytest.raises(anthropic.APIStatusError) as raised:
        async with claude_client.messages.stream(model=MODEL, max_tokens=8, messages=HELLO) as s:
            async for delta in s.text_stream:
                received.append(delta)
    # The HTTP status was 200, so it is the base class, told apart by `type`.
    assert type(raised.value) is anthropic.APIStatusError
    assert raised.value.type == "overloaded_error"
    assert "".join(received) == "Half an ans"


async def test_claude_dropped_connection(claude: FakeClaude, claude_client: AsyncAnthropic) -> None:
    claude.drop_connection()
    with pytest.raises(anthropic.APIConnectionError):
        await claude_client.messages.create(model=MODEL, max_tokens=8, messages=HELLO)


async def test_claude_dropped_mid_stream_escapes_as_httpx2_error(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    claude.drop_connection(partial_text="Half")
    with pytest.raises(httpx2.RemoteProtocolError):
        async with claude_client.messages.stream(model=MODEL, max_tokens=8, messages=HELLO) as s:
            async for _ in s.text_stream:
                pass


async def test_claude_delay_holds_the_next_response(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    claude.delay(0.2)
    started = time.monotonic()
    await claude_client.messages.create(model=MODEL, max_tokens=8, messages=HELLO)
    assert time.monotonic() - started >= 0.2  # a lower bound only: never time the upper one


async def test_claude_rejects_what_the_real_api_rejects(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    with pytest.raises(anthropic.BadRequestError, match="thread=False"):
        await claude_client.beta.messages.create(
            model=MODEL, max_tokens=8, messages=HELLO, thread={"type": "create"}
        )


# --- FakeClaude speaks the 5.5 models' API ---

SONNET = "claude-sonnet-5-5"
HAIKU = "claude-haiku-5-5"
BETWEEN_TOOLS: Any = {"type": "between_tools"}
VIEW: Any = {"command": "view", "path": "/memories"}


async def _tool_turn(client: AsyncAnthropic, **params: Any) -> Any:
    return await client.messages.create(
        model=SONNET, max_tokens=256, messages=HELLO, tools=[MEMORY_TOOL], **params
    )


def _continued(first: Any, content: list[Any]) -> list[Any]:
    """HELLO, then the assistant turn `content`, then the result of its tool call."""
    [call] = [b for b in first.content if b.type == "tool_use"]
    result = {"type": "tool_result", "tool_use_id": call.id, "content": "(empty)"}
    return [
        *HELLO,
        {"role": "assistant", "content": content},
        {"role": "user", "content": [result]},
    ]


async def test_claude_5_5_returns_progress_notes_as_signed_thinking_blocks(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    claude.reply_tool_use("memory", VIEW, text="Let me look.")
    claude.reply_tool_use("memory", VIEW, text="Let me look.")
    claude.reply_tool_use("memory", VIEW, text="Let me look.")

    between = await _tool_turn(claude_client, thinking=BETWEEN_TOOLS)
    adaptive = await _tool_turn(claude_client)  # the default on 5.5: adaptive, omitted
    summarized = await _tool_turn(
        claude_client, thinking={"type": "adaptive", "display": "summarized"}
    )

    # between_tools: no up-front thinking; the note comes back with its summary text.
    assert [b.type for b in between.content] == ["thinking", "tool_use"]
    assert between.content[0].thinking == "Let me look." and between.content[0].signature
    # adaptive: up-front thinking, and the note in a thinking block whose text is omitted
    # unless asked for: an app streaming text goes quiet between tool calls.
    assert [b.type for b in adaptive.content] == ["thinking", "tool_use"]
    assert adaptive.content[0].thinking == "" and adaptive.content[0].signature
    assert [b.thinking for b in summarized.content if b.type == "thinking"] == ["Let me look."]


async def test_claude_5_5_refuses_a_loop_that_drops_or_alters_its_thinking_blocks(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    claude.reply_tool_use("memory", VIEW, text="Let me look.")
    first = await _tool_turn(claude_client, thinking=BETWEEN_TOOLS)
    unchanged = [b.model_dump(exclude_none=True) for b in first.content]
    note, call = unchanged
    altered = {**note, "thinking": "I will look."}

    for content in (
        [call],
        [altered, call],
        [{**note, "cache_control": {"type": "ephemeral"}}, call],
    ):
        with pytest.raises(anthropic.BadRequestError):
            await claude_client.messages.create(
                model=SONNET,
                max_tokens=64,
                messages=_continued(first, content),
                tools=[MEMORY_TOOL],
                thinking=BETWEEN_TOOLS,
            )
    # Tied to the model and the conversation: another model, or a changed earlier turn.
    with pytest.raises(anthropic.BadRequestError, match="another model or conversation"):
        await claude_client.messages.create(
            model=HAIKU,
            max_tokens=64,
            messages=_continued(first, unchanged),
            tools=[MEMORY_TOOL],
        )
    edited = _continued(first, unchanged)
    edited[0] = {"role": "user", "content": "hello there, edited"}
    with pytest.raises(anthropic.BadRequestError, match="another model or conversation"):
        await claude_client.messages.create(
            model=SONNET,
            max_tokens=64,
            messages=edited,
            tools=[MEMORY_TOOL],
            thinking=BETWEEN_TOOLS,
        )
    # Passed back as it came, the loop goes on.
    claude.reply("Nothing there.")
    done = await claude_client.messages.create(
        model=SONNET,
        max_tokens=64,
        messages=_continued(first, unchanged),
        tools=[MEMORY_TOOL],
        thinking=BETWEEN_TOOLS,
    )
    assert done.content[0].type == "text" and done.stop_reason == "end_turn"


@pytest.mark.parametrize(
    ("model", "params", "refused"),
    [
        (SONNET, {"thinking": {"type": "disabled"}}, "between_tools"),
        (SONNET, {"thinking": BETWEEN_TOOLS, "output_config": {"effort": "max"}}, "effort"),
        (SONNET, {"tool_choice": {"type": "tool", "name": "memory"}}, "forced tool use"),
        (SONNET, {"tool_choice": {"type": "any"}}, "forced tool use"),
        (SONNET, {"extra_body": {"temperature": 0.2}}, "temperature"),
        (HAIKU, {"thinking": {"type": "disabled"}, "output_config": {"effort": "xhigh"}}, "effort"),
        (HAIKU, {"thinking": {"type": "enabled", "budget_tokens": 2048}}, "adaptive"),
    ],
)
async def test_claude_5_5_refuses_what_the_models_refuse(
    claude: FakeClaude, claude_client: AsyncAnthropic, model: str, params: Any, refused: str
) -> None:
    with pytest.raises(anthropic.BadRequestError, match=refused):
        await claude_client.messages.create(
            model=model, max_tokens=8, messages=HELLO, tools=[MEMORY_TOOL], **params
        )
    # What they accept: Haiku 5.5 with thinking off at low effort, tool_choice auto.
    accepted = await claude_client.messages.create(
        model=HAIKU,
        max_tokens=8,
        messages=HELLO,
        thinking={"type": "disabled"},
        output_config={"effort": "low"},
        tool_choice={"type": "auto"},
        tools=[MEMORY_TOOL],
    )
    assert accepted.stop_reason == "end_turn"


@pytest.mark.parametrize(
    "stop_reason",
    ["max_tokens", "pause_turn", "model_context_window_exceeded", "stop_sequence", "refusal"],
)
async def test_claude_returns_each_stop_reason_on_request_streamed_and_not(
    claude: FakeClaude, claude_client: AsyncAnthropic, stop_reason: str
) -> None:
    for _ in range(2):
        if stop_reason == "refusal":
            claude.refuse("Partial", category="bio")
        else:
            claude.reply_stopped("Partial", stop_reason)
    whole = await claude_client.messages.create(model=SONNET, max_tokens=8, messages=HELLO)
    async with claude_client.messages.stream(model=SONNET, max_tokens=8, messages=HELLO) as s:
        streamed = await s.get_final_message()

    for message in (whole, streamed):
        assert message.stop_reason == stop_reason
        assert message.content[-1].type == "text" and message.content[-1].text == "Partial"
        if stop_reason == "refusal":
            assert message.stop_details is not None and message.stop_details.category == "bio"


def _cached_prompt(breakpoints: int, conversation: list[Any]) -> dict[str, Any]:
    system = [{"type": "text", "text": f"Instructions, part {n}. " * 60} for n in range(4)]
    for block in system[:breakpoints]:
        block["cache_control"] = {"type": "ephemeral"}
    return {"model": SONNET, "max_tokens": 8, "system": system, "messages": conversation}


async def test_claude_caches_by_prefix_as_the_api_does(
    claude: FakeClaude, claude_client: AsyncAnthropic
) -> None:
    marked = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
        }
    ]
    first = await claude_client.messages.create(**_cached_prompt(1, marked))
    second = await claude_client.messages.create(**_cached_prompt(1, marked))
    counted = await claude_client.messages.count_tokens(
        model=SONNET, system=_cached_prompt(1, marked)["system"], messages=marked
    )

    # The first call writes both breakpoints' prefixes; the second reads the longest.
    assert first.usage.cache_read_input_tokens == 0
    assert first.usage.cache_creation_input_tokens == counted.input_tokens
    assert first.usage.input_tokens == 0
    assert second.usage.cache_read_input_tokens == counted.input_tokens
    assert second.usage.cache_creation is not None
    # A prefix under the model's minimum (512 tokens on Sonnet 5.5) is not cached at all.
    short = {
        "model": SONNET,
        "max_tokens": 8,
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": HELLO,
    }
    for _ in range(2):
        tiny = await claude_client.messages.create(**short)
        assert tiny.usage.cache_creation_input_tokens == tiny.usage.cache_read_input_tokens == 0
    # At most four breakpoints.
    with pytest.raises(anthropic.BadRequestError, match="maximum of 4"):
        await claude_client.messages.create(**_cached_prompt(4, marked))


# --- GCS emulator and fault proxy ---


def test_gcs_crud_and_preconditions(gcs_emulator: GcsEmulator, gcs_bucket: str) -> None:
    bucket = gcs_client(gcs_emulator.url).bucket(gcs_bucket)
    prefs = bucket.blob("users/U1/preferences.json")
    prefs.upload_from_string('{"tone": "brief"}', if_generation_match=0)
    first_generation = prefs.generation
    assert first_generation

    with pytest.raises(gcs_errors.PreconditionFailed):
        bucket.blob("users/U1/preferences.json").upload_from_string("{}", if_generation_match=0)
    update = bucket.blob("users/U1/preferences.json")
    update.upload_from_string('{"tone": "warm"}', if_generation_match=first_generation)
    with pytest.raises(gcs_errors.PreconditionFailed):
        stale = bucket.blob("users/U1/preferences.json")
        stale.upload_from_string("{}", if_generation_match=first_generation)

    gcs_emulator.write(gcs_bucket, "users/U2/preferences.json", "{}")
    gcs_emulator.write(gcs_bucket, "global/context.md", "# Org")
    names = [b.name for b in bucket.client.list_blobs(gcs_bucket, prefix="users/")]
    assert names == ["users/U1/preferences.json", "users/U2/preferences.json"]
    assert bucket.blob("users/U1/preferences.json").download_as_bytes() == b'{"tone": "warm"}'

    bucket.blob("global/context.md").delete()
    assert gcs_emulator.read(gcs_bucket, "global/context.md") is None
    assert gcs_emulator.names(gcs_bucket) == names


def test_latency_link_delays_and_counts_every_request(
    gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    with LatencyLink(gcs_emulator.url, delay=0.2) as link:
        bucket = gcs_client(link.url).bucket(gcs_bucket)
        started = time.monotonic()
        bucket.blob("a.json").upload_from_string(b"x" * 300_000, if_generation_match=0)
        uploaded = time.monotonic()
        assert bucket.blob("a.json").download_as_bytes() == b"x" * 300_000
        read = time.monotonic()
        with pytest.raises(gcs_errors.PreconditionFailed):
            bucket.blob("a.json").upload_from_string(b"y", if_generation_match=0)
        link.delay = 0.0
        bucket.blob("a.json").delete()
        # A body of unknown size goes up as a resumable upload: its start, then its bytes.
        bucket.blob("big.bin").upload_from_file(io.BytesIO(b"z" * (9 * 2**20)), size=None)
        seen = [line.split("?")[0].replace(gcs_bucket, "B") for _, line in link.requests]
    # Unless told not to (app/storage/gcs_connection.py), the library looks the bucket up
    # for its spans' attributes, in a thread of its own, at a moment of its choosing.
    lines = [line for line in seen if line != "GET /storage/v1/b/B"]
    assert lines == [
        "POST /upload/storage/v1/b/B/o",
        "GET /download/storage/v1/b/B/o/a.json",
        "POST /upload/storage/v1/b/B/o",
        "DELETE /storage/v1/b/B/o/a.json",
        "POST /upload/storage/v1/b/B/o",
        "PUT /upload/storage/v1/b/B/o",
    ]
    assert uploaded - started >= 0.2 and read - uploaded >= 0.2
    assert gcs_emulator.read(gcs_bucket, "big.bin") == b"z" * (9 * 2**20)


def test_fault_proxy_delays_one_object_and_fails_another(
    gcs_emulator: GcsEmulator, gcs_bucket: str
) -> None:
    gcs_emulator.write(gcs_bucket, "users/U1/preferences.json", "{}")
    gcs_emulator.write(gcs_bucket, "global/context.md", "# Org")
    with FaultyProxy(gcs_emulator.url) as proxy:
        bucket = gcs_client(proxy.url).bucket(gcs_bucket)
        proxy.add_rule("users/U1/preferences.json", delay=0.25)
        proxy.add_rule("global/context.md", status=503, times=1)

        started = time.monotonic()
        assert bucket.blob("users/U1/preferences.json").download_as_bytes() == b"{}"
        assert time.monotonic() - started >= 0.25
        with pytest.raises(gcs_errors.ServiceUnavailable):
            bucket.blob("global/context.md").download_as_bytes(retry=None)
        assert bucket.blob("global/context.md").download_as_bytes() == b"# Org"  # times=1 spent

        proxy.clear_rules()
        bucket.blob("sessions/1-2/context.md").upload_from_string("s", if_generation_match=0)
        downloads = [(r.status, r.rule) for r in proxy.requests if "/download/" in r.path_qs]

    assert downloads == [
        (200, "users/U1/preferences.json"),
        (503, "global/context.md"),
        (200, None),
    ]
    assert gcs_emulator.read(gcs_bucket, "sessions/1-2/context.md") == b"s"
