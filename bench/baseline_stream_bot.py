"""The plain bot the first-words benchmark sets beside Orion: what the libraries give with
nothing tuned — Bolt, anthropic, and slack_sdk's `chat_stream` with its default buffer
(256 characters).

One `message` listener answers a DM in its thread (`thread_ts or ts`, as agent_view
conversations go): it streams Claude's answer through `chat_stream`, and when Claude asks
for the memory tool it answers the call and streams the next request's text into the same
message, as Orion's agent loop does. Served over HTTP by uvicorn in its own thread and event
loop, as Orion is in the benchmark (tests/orion_server.py), so both take the same road from
the signed event to Slack.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import httpx
import uvicorn
from anthropic import AsyncAnthropic
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from tests.fakes.slack_events import sign

MEMORY_TOOL = {"type": "memory_20250818", "name": "memory"}
NOTHING_REMEMBERED = "The directory is empty."


def build_app(
    *, token: str, signing_secret: str, slack_url: str, claude_url: str, model: str
) -> AsyncApp:
    app = AsyncApp(
        client=AsyncWebClient(token=token, base_url=slack_url), signing_secret=signing_secret
    )
    claude = AsyncAnthropic(base_url=claude_url, api_key="baseline", max_retries=0)

    @app.event("message")
    async def answer(event: dict[str, Any], client: AsyncWebClient, context: Any) -> None:
        if event.get("bot_id") or event.get("subtype"):
            return
        streamer = await client.chat_stream(
            channel=event["channel"],
            thread_ts=event.get("thread_ts") or event["ts"],
            recipient_user_id=event.get("user"),
            recipient_team_id=context.team_id,
        )
        messages: list[dict[str, Any]] = [{"role": "user", "content": event.get("text") or ""}]
        while True:
            async with claude.messages.stream(
                model=model, max_tokens=4096, messages=messages, tools=[MEMORY_TOOL]
            ) as stream:
                async for text in stream.text_stream:
                    await streamer.append(markdown_text=text)
                final = await stream.get_final_message()
            calls = [block for block in final.content if block.type == "tool_use"]
            if final.stop_reason != "tool_use" or not calls:
                break
            messages.append({"role": "assistant", "content": final.model_dump()["content"]})
            results = [
                {"type": "tool_result", "tool_use_id": call.id, "content": NOTHING_REMEMBERED}
                for call in calls
            ]
            messages.append({"role": "user", "content": results})
        await streamer.stop()

    return app


class BaselineBot:
    """The bot on loopback: `post_event` delivers a signed event as Slack would."""

    def __init__(
        self, *, token: str, signing_secret: str, slack_url: str, claude_url: str, model: str
    ) -> None:
        self._secret = signing_secret
        bolt = build_app(
            token=token,
            signing_secret=signing_secret,
            slack_url=slack_url,
            claude_url=claude_url,
            model=model,
        )
        handler = AsyncSlackRequestHandler(bolt)

        async def events(request: Request) -> Any:
            return await handler.handle(request)

        app = Starlette(routes=[Route("/slack/events", events, methods=["POST"])])
        self._server = uvicorn.Server(uvicorn.Config(app, log_config=None, access_log=False))
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{self._socket.getsockname()[1]}"
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self.http = httpx.Client(base_url=url, timeout=10)

    def __enter__(self) -> BaselineBot:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the baseline bot did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *_: object) -> None:
        self.http.close()
        self._server.should_exit = True
        self._thread.join(timeout=15)
        self._socket.close()

    def post_event(self, payload: dict[str, Any]) -> httpx.Response:
        body = json.dumps(payload).encode()
        headers = {"Content-Type": "application/json", **sign(body, self._secret)}
        return self.http.post("/slack/events", content=body, headers=headers)
