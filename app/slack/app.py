"""The Bolt app: one set of listeners, served over HTTP or Socket Mode."""

from __future__ import annotations

from slack_bolt.async_app import AsyncApp, AsyncAssistant

from app.config import RunMode, Settings
from app.services import ServiceProvider
from app.slack import (
    feedback,
    other_messages,
    thread_context_changed,
    thread_started,
    user_message,
)
from app.slack.dedupe import EventDeduplicator
from app.slack.thread_context_store import StoredThreadContextStore
from app.slack.web_client import build_web_client


def build_bolt_app(settings: Settings, provider: ServiceProvider, *, mode: RunMode) -> AsyncApp:
    client = build_web_client(
        token=settings.slack_bot_token.get_secret_value(), base_url=settings.slack_api_url
    )
    http = mode is RunMode.HTTP
    signing_secret = settings.slack_signing_secret
    app = AsyncApp(
        client=client,
        signing_secret=signing_secret.get_secret_value() if http and signing_secret else None,
        # Socket Mode messages arrive over an authenticated WebSocket, not signed HTTP.
        request_verification_enabled=http,
        # Ack first, work after: Slack retries anything not acked within 3 seconds.
        process_before_response=False,
    )
    context_store = StoredThreadContextStore(provider)
    dedupe = EventDeduplicator(provider)
    assistant = AsyncAssistant(thread_context_store=context_store)
    thread_started.register(assistant, provider, dedupe)
    user_message.register(assistant, provider, dedupe)
    thread_context_changed.register(assistant, context_store, dedupe)
    app.assistant(assistant)
    feedback.register(app)
    other_messages.register(app)
    return app
