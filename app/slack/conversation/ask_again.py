"""The *Ask again* button under an answer a restart cut off (docs/operations.md): the first click
anywhere claims the question, and only the person who asked it, there, can ask it again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.context.ack.async_ack import AsyncAck
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from app.config import SlackExperience
from app.learning.conversations import read_conversation
from app.memory.homes import channel as channel_home
from app.memory.homes import person
from app.memory.scopes import is_channel_id, is_shared_channel_id, is_thread_ts
from app.observability.logging import get_logger
from app.services import ServiceProvider
from app.slack.conversation.answering import Answerer, Incoming
from app.slack.conversation.dedupe import EventDeduplicator
from app.slack.conversation.presence import AgentSession, AssistantStatus, InChannel, Presence
from app.slack.conversation.reply_stream import ASK_AGAIN_ACTION_ID
from app.slack.event_scope import handling
from app.slack.mrkdwn import text_of

log = get_logger(__name__)

NOT_YOURS = "Only the person who asked can ask that again."
NOT_FOUND = "I couldn't find that question any more. Could you ask it again?"


def register(
    app: AsyncApp, answerer: Answerer, dedupe: EventDeduplicator, provider: ServiceProvider
) -> None:
    experience = provider.settings.slack_experience

    @app.action(ASK_AGAIN_ACTION_ID)
    async def on_ask_again(
        ack: AsyncAck,
        body: dict[str, Any],
        action: dict[str, Any],
        client: AsyncWebClient,
        context: AsyncBoltContext,
    ) -> None:
        await ack()
        user = (body.get("user") or {}).get("id")
        channel = (body.get("channel") or {}).get("id")
        thread_ts = (body.get("message") or {}).get("thread_ts")
        question_ts = action.get("value")
        async with handling(
            "slack.ask_again", body, user=user, channel=channel, thread_ts=thread_ts
        ):
            if not (
                isinstance(user, str)
                and is_channel_id(channel)
                and is_thread_ts(thread_ts)
                and is_thread_ts(question_ts)
            ):
                log.info("slack.ask_again.malformed")
                return
            question = await _recorded_question(provider, user, channel, thread_ts, question_ts)
            if question is None:
                question = await _question_in_slack(client, channel, thread_ts, question_ts)
            if question is None or question.asker != user:
                log.info("slack.ask_again.refused", found=question is not None)
                await _tell(client, channel, user, thread_ts, NOT_YOURS if question else NOT_FOUND)
                return
            if not await dedupe.first_time(f"askagain{channel}{question_ts.replace('.', '')}"):
                log.info("slack.ask_again.already_asked")
                return

            in_channel = is_shared_channel_id(channel)
            presence: Presence = (
                InChannel()
                if in_channel
                else AgentSession(client, channel=channel, thread_ts=thread_ts)
                if experience is SlackExperience.AGENT
                else AssistantStatus(client, channel=channel, thread_ts=thread_ts)
            )
            await answerer.answer(
                Incoming(
                    body=body,
                    context=context,
                    channel=channel,
                    thread_ts=thread_ts,
                    ts=question_ts,
                    user=user,
                    text=question.text,
                    retried=False,
                    # A channel's answer is asked again as the channel's (channel_turns.py
                    # asks Slack whether Orion still answers there).
                    in_channel=in_channel,
                ),
                client=client,
                presence=presence,
            )


@dataclass(frozen=True)
class _Question:
    asker: str | None
    text: str


async def _recorded_question(
    provider: ServiceProvider, user: str, channel: str, thread_ts: str, question_ts: str
) -> _Question | None:
    """The question as Orion's record of the conversation keeps it — in the channel's home,
    or the clicking person's —; None when it keeps none (memory off, storage failing)."""
    store = provider.storage.memory_store
    if store is None:
        return None
    try:
        home = channel_home(channel) if is_shared_channel_id(channel) else person(user)
        async with provider.storage_within(provider.settings.memory_load_timeout_s):
            record = await read_conversation(store, home, thread_ts)
    except Exception as exc:
        log.warning("slack.ask_again.record_unreadable", exc_info=exc)
        return None
    if record is None:
        return None
    if record.owner.channel != channel:
        return _Question(asker=None, text="")  # another conversation's thread: nobody's here
    for said in record.messages:
        if said.ts == question_ts and said.role == "user":
            # In a channel's conversation, each message's own author asked it.
            asker = said.user if record.owner.in_channel else record.owner.user
            return _Question(asker=asker, text=said.text)
    return None


async def _question_in_slack(
    client: AsyncWebClient, channel: str, thread_ts: str, question_ts: str
) -> _Question | None:
    """The question's message as Slack has it now; None when it is gone (or Slack fails)."""
    try:
        page = await client.conversations_replies(
            channel=channel,
            ts=thread_ts,
            oldest=question_ts,
            latest=question_ts,
            inclusive=True,
            limit=2,  # Slack puts the thread's parent first, whatever the window
        )
    except Exception as exc:
        log.warning("slack.ask_again.unreadable", exc_info=exc)
        return None
    for message in page.get("messages") or []:
        if message.get("ts") == question_ts and not message.get("bot_id"):
            return _Question(asker=message.get("user"), text=text_of(message))
    return None


async def _tell(client: AsyncWebClient, channel: str, user: str, thread_ts: str, text: str) -> None:
    try:
        await client.chat_postEphemeral(channel=channel, user=user, thread_ts=thread_ts, text=text)
    except Exception as exc:
        log.warning("slack.ask_again.reply_failed", exc_info=exc)
