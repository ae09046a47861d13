"""Read a Slack thread back as conversation history for Claude."""

from __future__ import annotations

from slack_sdk.web.async_client import AsyncWebClient

from app.agent.history import ThreadMessage

# conversations.replies pages from the oldest message; one generous page covers the
# assistant threads people actually have, and history is bounded again later.
REPLIES_PAGE_SIZE = 200
# Slack's own root message of an assistant thread ("New Assistant Thread"): not something
# the person wrote, so not part of the conversation.
ASSISTANT_THREAD_ROOT = "assistant_app_thread"


async def read_thread(
    client: AsyncWebClient,
    *,
    channel: str,
    thread_ts: str,
    current_ts: str,
    current_text: str,
) -> list[ThreadMessage]:
    """The thread's messages, oldest first, ending with the message being answered.

    Orion's own messages (anything posted by a bot) become `assistant` turns. The message
    being answered is taken from the event itself, so history is right even when Slack's
    read API has not caught up with it yet.
    """
    response = await client.conversations_replies(
        channel=channel, ts=thread_ts, limit=REPLIES_PAGE_SIZE
    )
    history = [
        ThreadMessage("assistant" if message.get("bot_id") else "user", message.get("text") or "")
        for message in response.get("messages", [])
        if message.get("ts") != current_ts and message.get("subtype") != ASSISTANT_THREAD_ROOT
    ]
    history.append(ThreadMessage("user", current_text))
    return history
