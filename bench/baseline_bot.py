"""A plain Slack assistant, for bench/burst.py to hold Orion against: the same work per
greeting and per first message, written the way the libraries' own guides write it, with
no tuning at all.

Bolt (AsyncApp behind Starlette and uvicorn, as Orion serves), the anthropic SDK's default
client and google-cloud-storage's default client. Every storage call runs on asyncio's
default thread pool (`asyncio.to_thread`), all of one event's at once:

- `assistant_thread_started`: claim the event (create-only `events/{id}`) beside reading
  the organisation's context, the person's preferences, the thread's summary and their
  welcome; greet with their preferences; suggest prompts; save the thread's context.
- a message: claim it beside reading the thread's saved context and the thread from
  Slack; stream Claude's answer; post it.

Configured by the same environment as Orion (tests/orion_process.py `orion_env`) plus
GCS_MEMORIES_BUCKET and STORAGE_EMULATOR_HOST. Started by the benchmark as its own process:
`python -m bench.baseline_bot`.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import uvicorn
from anthropic import AsyncAnthropic
from google.api_core.exceptions import NotFound, PreconditionFailed
from google.cloud import storage
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

MODEL = "claude-sonnet-5-5"
PROMPTS = [{"title": "What do you remember about me?", "message": "What do you remember?"}]

bucket = storage.Client().bucket(os.environ["GCS_MEMORIES_BUCKET"])
claude = AsyncAnthropic()
app = AsyncApp(
    client=AsyncWebClient(
        token=os.environ["SLACK_BOT_TOKEN"], base_url=os.environ["SLACK_API_URL"]
    ),
    signing_secret=os.environ["SLACK_SIGNING_SECRET"],
)


def _read(key: str) -> str | None:
    try:
        return bucket.blob(key).download_as_text()
    except NotFound:
        return None


def _claim(event_id: str) -> bool:
    try:
        bucket.blob(f"events/{event_id}").upload_from_string("{}", if_generation_match=0)
    except PreconditionFailed:
        return False
    return True


def _write(key: str, content: str) -> None:
    bucket.blob(key).upload_from_string(content)


def _context_key(channel: str, thread_ts: str) -> str:
    return f"baseline/threads/{channel}/{thread_ts}.json"


def _greeting(preferences: str | None) -> str:
    if not preferences:
        return "Hi! How can I help?"
    stated = "; ".join(f"{k}: {v}" for k, v in json.loads(preferences).items())
    return f"Welcome back! I'll keep your preferences in mind ({stated})."


@app.event("assistant_thread_started")
async def thread_started(body: dict[str, Any], event: dict[str, Any], client: Any) -> None:
    thread = event["assistant_thread"]
    user, channel, thread_ts = thread["user_id"], thread["channel_id"], thread["thread_ts"]
    keys = [
        "global/context.md",
        f"users/{user}/preferences.json",
        f"sessions/{thread_ts.replace('.', '-')}/context.md",
        f"people/{user}/welcome.json",
    ]
    claimed, global_context, preferences, summary, _ = await asyncio.gather(
        asyncio.to_thread(_claim, body["event_id"]),
        *(asyncio.to_thread(_read, key) for key in keys),
    )
    if not claimed:
        return
    await client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=_greeting(preferences))
    await client.assistant_threads_setSuggestedPrompts(
        channel_id=channel, thread_ts=thread_ts, prompts=PROMPTS
    )
    memory = "\n".join(part for part in (global_context, preferences, summary) if part)
    context = json.dumps({"memory": memory})
    await asyncio.to_thread(_write, _context_key(channel, thread_ts), context)


@app.event("message")
async def message(body: dict[str, Any], event: dict[str, Any], client: Any) -> None:
    if event.get("bot_id") or event.get("subtype") or not event.get("thread_ts"):
        return
    channel, thread_ts = event["channel"], event["thread_ts"]
    claimed, context, replies = await asyncio.gather(
        asyncio.to_thread(_claim, body["event_id"]),
        asyncio.to_thread(_read, _context_key(channel, thread_ts)),
        client.conversations_replies(channel=channel, ts=thread_ts),
    )
    if not claimed:
        return
    # The thread so far as one block of text before the question (its first message is
    # the bot's greeting, which Claude's alternating roles would not take as a turn).
    earlier = "\n".join(m.get("text") or "" for m in replies["messages"][:-1])
    memory = json.loads(context)["memory"] if context else ""
    async with claude.messages.stream(
        model=MODEL,
        max_tokens=1024,
        system=f"You are a helpful assistant.\n{memory}",
        messages=[{"role": "user", "content": f"{earlier}\n\n{event['text']}"}],
    ) as stream:
        answer = await stream.get_final_text()
    await client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=answer)


handler = AsyncSlackRequestHandler(app)


async def _events(request: Request) -> Any:
    return await handler.handle(request)


async def _healthz(_: Request) -> PlainTextResponse:
    return PlainTextResponse("ok")


api = Starlette(
    routes=[
        Route("/slack/events", _events, methods=["POST"]),
        Route("/healthz", _healthz),
    ]
)

if __name__ == "__main__":
    uvicorn.run(api, host="127.0.0.1", port=int(os.environ["PORT"]), log_level="warning")
