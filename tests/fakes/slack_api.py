"""FakeSlack: Slack's Web API on loopback, for the real `AsyncWebClient`.

`AsyncWebClient(token="xoxb-...", base_url=fake.url)` talks to it like to slack.com. It keeps
a workspace model (slack_model.py) so tests assert what a user would see — `fake.thread(...)`
— rather than which calls were made, though every call is recorded too.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import copy
import itertools
import json
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiohttp import web
from multidict import CIMultiDict

from tests.fakes._http_server import HttpFake
from tests.fakes._waiting import HOLD_LIMIT_S, PATIENCE_S, wait_until, wait_until_async
from tests.fakes.slack_model import (
    APP_ID,
    ASSISTANT_THREAD_ROOT,
    BOT_ID,
    BOT_USER_ID,
    SESSION_STATUSES,
    TASK_STATUSES,
    TEAM_ID,
    AgentSession,
    Channel,
    Message,
    StatusUpdate,
    SuggestedPrompts,
    Task,
    Workspace,
    tasks_of,
)
from tests.fakes.socket_mode import FakeSocketModeServer

T = TypeVar("T")

# Slack's documented limits the app must respect; exceeding them is an app bug.
MARKDOWN_TEXT_LIMIT = 12_000  # per call; and for all markdown blocks of one message together
TEXT_LIMIT = 40_000  # a message's `text`
LOADING_MESSAGES_LIMIT = 10
SESSION_TITLE_LIMIT = 200
# What Slack answers about a stream that is no longer streaming (it expired, or ended).
EXPIRED = "message_not_in_streaming_state"

# conversations.history and conversations.replies for a commercially distributed app not
# approved for the Slack Marketplace (docs.slack.dev "Rate limits": new apps and installs
# since 2025-05-29, existing installations since 2026-03-03): one call a minute per method
# and workspace, and at most 15 messages a call (the default `limit` too).
HISTORY_METHODS = ("conversations.history", "conversations.replies")
NON_MARKETPLACE_CALLS_PER_MINUTE = 1
NON_MARKETPLACE_PAGE_LIMIT = 15

# Streamed chunks: a task's title, details and output; the display modes Slack knows.
TASK_TEXT_LIMIT = 256
TASK_DISPLAY_MODES = ("plan", "timeline")
CHUNK_TYPES = ("markdown_text", "task_update", "plan_update", "blocks")

# Block Kit limits of a published view (views.publish answers `invalid_arguments` beyond them).
VIEW_BLOCKS_LIMIT = 100
PRIVATE_METADATA_LIMIT = 3_000
SECTION_TEXT_LIMIT = 3_000
HEADER_TEXT_LIMIT = 150
BUTTON_TEXT_LIMIT = 75
BUTTON_VALUE_LIMIT = 2_000
ACTION_ID_LIMIT = 255
CONTEXT_ELEMENTS_LIMIT = 10
ACTIONS_ELEMENTS_LIMIT = 25
CONFIRM_TITLE_LIMIT = 100
CONFIRM_TEXT_LIMIT = 300
CONFIRM_BUTTON_LIMIT = 30

# What Slack answers as a rotating token's lifetime (12 hours).
ROTATED_TOKEN_LIFETIME_S = 43_200

# Form-encoded requests carry structured arguments as JSON strings.
_JSON_ARGS = (
    "blocks",
    "attachments",
    "metadata",
    "chunks",
    "prompts",
    "loading_messages",
    "view",
    "files",
)


@dataclass(frozen=True)
class Call:
    method: str
    args: dict[str, Any]
    headers: Mapping[str, str]
    # The `error` of an ok:false answer (injected or real), else None.
    error: str | None = None
    # When it was answered (`time.monotonic()`), to order it against other fakes' requests.
    at: float = field(default_factory=time.monotonic)
    # The token the call was made with (None: none, or client credentials).
    token: str | None = None


@dataclass
class Installed:
    """A workspace (or organisation) that installed the app through `oauth.v2.access`."""

    team_id: str | None
    enterprise_id: str | None
    is_enterprise_install: bool
    bot_token: str
    refresh_token: str | None  # token rotation on: the bot token expires
    lifetime_s: int = 43_200  # a rotating token's (Slack's: 12 hours)


@dataclass
class _Injection:
    method: str
    error: str
    status: int
    retry_after: int | None
    remaining: int | None


class SlackError(Exception):
    """Raised by a method handler to answer `{"ok": false, "error": ...}`."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


@dataclass
class _Request:
    method: str
    args: dict[str, Any]
    token: str | None
    headers: CIMultiDict[str] = field(default_factory=CIMultiDict)


@dataclass
class UploadedFile:
    """A file uploaded with files_upload_v2: its bytes (once the upload POST arrived), and
    where it was shared (files.completeUploadExternal)."""

    id: str
    filename: str
    length: int
    content: bytes | None = None
    title: str | None = None
    channels: list[str] = field(default_factory=list)
    initial_comment: str | None = None
    message_ts: str | None = None  # the file-share message in the channel

    @property
    def text(self) -> str:
        return (self.content or b"").decode("utf-8")


Handler = Callable[[dict[str, Any]], dict[str, Any]]


class FakeSlack(HttpFake):
    _url_suffix = "/api/"

    def __init__(
        self, socket_mode: FakeSocketModeServer | bool | None = None, *, agent_view: bool = False
    ) -> None:
        """`agent_view`: behave as for an app with Slack's Agent messaging experience."""
        super().__init__()
        self.agent_view = agent_view
        self.workspace = Workspace()
        self._lock = threading.Lock()
        self._calls: list[Call] = []
        self._injections: list[_Injection] = []
        self._holds: dict[str, threading.Event] = {}
        self._held: collections.Counter[str] = collections.Counter()  # calls held right now
        self._response_urls = itertools.count(1)
        self._stream_break: tuple[int, str] | None = None
        # A workspace without Slack's agent display refuses stream calls that carry it.
        self._refuse_task_display: str | None = None
        # Non-Marketplace limits on reading history (limit_history_reads): when each
        # method was last answered, per token, on the fake's clock (minute_passes moves it).
        self._history_limited = False
        self._history_answered: dict[tuple[str, str | None], float] = {}
        self._clock_offset = 0.0
        # App Home views by user, oldest first; uploaded files by id; DMs by user.
        self._views: dict[str, list[dict[str, Any]]] = {}
        self._view_ids = itertools.count(1)
        self._files: dict[str, UploadedFile] = {}
        self._file_ids = itertools.count(1)
        self._dms: dict[tuple[str | None, str], str] = {}  # by team (None: any) and user
        # Distribution mode (OAuth installs): codes handed out and not yet exchanged, the
        # installations (by bot token) and the tokens revoked since.
        self.client_id: str | None = None
        self.client_secret: str | None = None
        self._codes: dict[str, Installed] = {}
        self._installed: dict[str, Installed] = {}
        self._refresh_tokens: dict[str, Installed] = {}
        self._revoked: set[str] = set()
        self._token_ids = itertools.count(1)
        self._calling: Installed | None = None  # whose token the call being answered used
        self.socket_mode: FakeSocketModeServer | None = None
        self._owns_socket_mode = False
        if socket_mode is True:
            self.socket_mode = FakeSocketModeServer()
            self._owns_socket_mode = True
        elif isinstance(socket_mode, FakeSocketModeServer):
            self.socket_mode = socket_mode
        self._handlers: dict[str, Handler] = {
            "auth.test": self._auth_test,
            "auth.revoke": self._auth_revoke,
            "oauth.v2.access": self._oauth_access,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "chat.delete": self._delete,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.startStream": self._start_stream,
            "chat.appendStream": self._append_stream,
            "chat.stopStream": self._stop_stream,
            "assistant.threads.setStatus": self._set_status,
            "assistant.threads.setSuggestedPrompts": self._set_suggested_prompts,
            "assistant.threads.setTitle": self._set_title,
            "agents.sessions.setStatus": self._set_session_status,
            "agents.sessions.rename": self._rename_session,
            "conversations.replies": self._replies,
            "conversations.history": self._history,
            "conversations.info": self._conversation_info,
            "conversations.members": self._conversation_members,
            "conversations.open": self._open_conversation,
            "views.publish": self._publish_view,
            "files.getUploadURLExternal": self._get_upload_url,
            "files.completeUploadExternal": self._complete_upload,
            "users.info": self._user_info,
            "apps.connections.open": self._connections_open,
        }

    # --- lifecycle ---

    def start(self) -> FakeSlack:
        if self._owns_socket_mode and self.socket_mode is not None:
            self.socket_mode.start()
        return super().start()

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            if self._owns_socket_mode and self.socket_mode is not None:
                self.socket_mode.stop()

    def attach_socket_mode(self, server: FakeSocketModeServer) -> None:
        """Make `apps.connections.open` hand out URLs of `server` (the caller manages it)."""
        self.socket_mode = server

    def _routes(self) -> list[web.RouteDef]:
        return [
            web.route("*", "/api/{method}", self._serve_method),
            web.post("/actions/{hook:.+}", self._serve_response_url),
            web.post("/upload/{file_id}", self._serve_upload),
        ]

    # --- HTTP layer ---

    async def _serve_method(self, request: web.Request) -> web.Response:
        req = await _parse(request)
        gate = self._holds.get(req.method)
        if gate is not None:
            with self._lock:
                self._held[req.method] += 1
            try:
                await asyncio.get_running_loop().run_in_executor(None, gate.wait, HOLD_LIMIT_S)
            finally:
                with self._lock:
                    self._held[req.method] -= 1
        try:
            self._authenticate(req)
            injected = self._take_injection(req.method) or self._history_limit(req)
            if injected is not None:
                self._record(req, injected.error)
                headers = {}
                if injected.retry_after is not None:
                    headers["Retry-After"] = str(injected.retry_after)
                body = {"ok": False, "error": injected.error}
                return web.json_response(body, status=injected.status, headers=headers)
            handler = self._handlers.get(req.method, _fallback)
            # Model updates happen under the workspace lock so a test never sees half a call.
            with self.workspace.lock:
                self._calling = self._installed.get(req.token or "")
                result = handler(self._as_answered(req))
        except SlackError as e:
            self._record(req, e.error)
            return web.json_response({"ok": False, "error": e.error})
        except Exception as e:
            # A bug in the fake or arguments it cannot read: make it loud and visible in calls.
            self._record(req, f"fake_internal_error: {e!r}")
            return web.json_response({"ok": False, "error": "fatal_error"}, status=500)
        self._record(req, None)
        return web.json_response({"ok": True, **result})

    async def _serve_response_url(self, request: web.Request) -> web.Response:
        body = await request.json() if request.can_read_body else {}
        headers = CIMultiDict(request.headers)
        # Which response_url it was (`response_answer` finds it by this).
        headers["X-Fake-Path"] = request.match_info["hook"]
        self._record(_Request("response_url", dict(body), None, headers), None)
        return web.json_response({"ok": True})

    async def _serve_upload(self, request: web.Request) -> web.Response:
        """files_upload_v2's second step: the file's bytes, POSTed to the upload_url that
        files.getUploadURLExternal handed out (no token: the URL is the credential)."""
        data = await request.read()
        file_id = request.match_info["file_id"]
        headers = CIMultiDict(request.headers)
        with self.workspace.lock:
            uploaded = self._files.get(file_id)
            if uploaded is not None and uploaded.message_ts is None:
                uploaded.content = data
        self._record(
            _Request("upload", {"file_id": file_id, "bytes": len(data)}, None, headers), None
        )
        if uploaded is None:
            return web.Response(status=404, text="file_not_found")
        return web.Response(status=200, text=f"OK - {len(data)}")

    def _authenticate(self, req: _Request) -> None:
        token = req.token
        if req.method == "oauth.v2.access":
            self._authenticate_client(req)
            return
        if not token:
            raise SlackError("not_authed")
        if token in self._revoked:
            raise SlackError("token_revoked")
        if req.method == "apps.connections.open":
            if not token.startswith("xapp-"):
                raise SlackError("not_allowed_token_type")
        elif token.startswith("xapp-"):
            raise SlackError("not_allowed_token_type")
        elif not token.startswith(("xoxb-", "xoxp-")):
            raise SlackError("invalid_auth")

    def _authenticate_client(self, req: _Request) -> None:
        """oauth.v2.access authenticates the app (HTTP Basic, as slack_sdk sends it, or
        client_id/client_secret arguments), not a token."""
        auth = req.headers.get("Authorization", "")
        client_id, client_secret = req.args.get("client_id"), req.args.get("client_secret")
        if auth.startswith("Basic "):
            decoded = base64.b64decode(auth.removeprefix("Basic ")).decode()
            client_id, _, client_secret = decoded.partition(":")
        if (client_id, client_secret) != (self.client_id, self.client_secret):
            raise SlackError(
                "invalid_client_id" if client_id != self.client_id else "bad_client_secret"
            )

    def _record(self, req: _Request, error: str | None) -> None:
        with self._lock:
            token = req.token if req.method != "oauth.v2.access" else None
            self._calls.append(Call(req.method, req.args, req.headers, error, token=token))

    # --- error injection ---

    def inject_error(
        self,
        method: str,
        error: str = "ratelimited",
        status: int = 429,
        retry_after: int | None = None,
        times: int | None = 1,
    ) -> None:
        """Answer the next `times` calls of `method` (None: all, until clear_errors) with
        `{"ok": false, "error": error}` at HTTP `status`, plus `Retry-After` when given."""
        with self._lock:
            self._injections.append(_Injection(method, error, status, retry_after, times))

    def hold(self, method: str) -> threading.Event:
        """Keep every call of `method` waiting until the returned event is set (at most
        HOLD_LIMIT_S), so that a test can make something happen in between; the calls then
        go on as usual."""
        gate = threading.Event()
        with self._lock:
            self._holds[method] = gate
        return gate

    def held(self, method: str) -> int:
        """How many calls of `method` are waiting on a `hold` right now."""
        with self._lock:
            return self._held[method]

    def clear_errors(self) -> None:
        with self._lock:
            self._injections.clear()

    def reset(self) -> None:
        """Back to an empty workspace with no calls or injected errors — for a fake shared by
        several tests."""
        with self._lock:
            self._injections.clear()
            self._holds.clear()
            self._calls.clear()
            self._stream_break = None
            self._refuse_task_display = None
            self._history_limited = False
            self._history_answered.clear()
            self._views.clear()
            self._files.clear()
            self._dms.clear()
            self.workspace = Workspace()

    def _take_injection(self, method: str) -> _Injection | None:
        with self._lock:
            for injection in self._injections:
                if injection.method != method:
                    continue
                if injection.remaining is not None:
                    injection.remaining -= 1
                    if injection.remaining <= 0:
                        self._injections.remove(injection)
                return injection
        return None

    def limit_history_reads(self) -> None:
        """Answer conversations.history and conversations.replies as Slack does for a
        commercially distributed app outside the Marketplace: at most 15 messages a call,
        and one call a minute per method and workspace — a second within the minute gets
        HTTP 429 `ratelimited` with `Retry-After` (the seconds left of the minute)."""
        with self._lock:
            self._history_limited = True

    def minute_passes(self) -> None:
        """Move the fake's clock on a minute: the history methods may be called again."""
        with self._lock:
            self._clock_offset += 60.0

    def _history_limit(self, req: _Request) -> _Injection | None:
        """The limited answer to a history call past its allowance; None to answer it (and
        count it), capping its page."""
        if req.method not in HISTORY_METHODS:
            return None
        with self._lock:
            if not self._history_limited:
                return None
            now = time.monotonic() + self._clock_offset
            key = (req.method, req.token)
            last = self._history_answered.get(key)
            if last is not None and now - last < 60.0:
                retry_after = max(1, int(60.0 - (now - last)) + 1)
                return _Injection(req.method, "ratelimited", 429, retry_after, None)
            self._history_answered[key] = now
        return None

    def _as_answered(self, req: _Request) -> dict[str, Any]:
        """The call's arguments as Slack applies them: a limited history read's page is
        cut to 15 messages, whatever `limit` asked (the call is recorded as asked)."""
        with self._lock:
            limited = self._history_limited and req.method in HISTORY_METHODS
        if not limited:
            return req.args
        limit = int(req.args.get("limit") or NON_MARKETPLACE_PAGE_LIMIT)
        return {**req.args, "limit": min(limit, NON_MARKETPLACE_PAGE_LIMIT)}

    def break_streams_after(self, chars: int, error: str = "internal_error") -> None:
        """Fail every chat.appendStream to a stream that already shows `chars` characters
        with `error` (the text so far stays visible; stopping the stream still works)."""
        with self._lock:
            self._stream_break = (chars, error)

    def refuse_task_display(self, error: str = "invalid_arguments") -> None:
        """Behave like a workspace without the agent display: every stream call carrying
        chunks other than markdown text, or a `task_display_mode`, fails with `error`."""
        with self._lock:
            self._refuse_task_display = error

    def _check_task_display(self, args: dict[str, Any]) -> None:
        displays = "task_display_mode" in args or any(
            chunk.get("type") != "markdown_text" for chunk in args.get("chunks") or []
        )
        with self._lock:
            refusal = self._refuse_task_display
        if displays and refusal is not None:
            raise SlackError(refusal)

    def expire_streams_after(self, chars: int) -> None:
        """End a stream's streaming state, as Slack does after a few minutes, at the first
        chat.appendStream once it shows `chars` characters: that call and every later one
        (stopStream too) fail with `message_not_in_streaming_state`. Unlike
        `expire_streams`, it does not race the answer's writer."""
        with self._lock:
            self._stream_break = (chars, EXPIRED)

    def expire_streams(self) -> None:
        """End the streaming state of every open stream, as Slack does after a few minutes:
        the text so far stays visible; appendStream/stopStream then fail with
        `message_not_in_streaming_state`."""
        with self.workspace.lock:
            for message in self.workspace.streaming_messages():
                message.streaming = False

    def stop_streams(self, channel: str, thread_ts: str) -> list[str]:
        """What Slack does when the person presses Stop (agent_view): every open stream of
        the app in that thread stops streaming, its text so far staying visible, and later
        calls to it fail with `message_not_in_streaming_state` — as an expired stream's do.
        Returns their ts, which Slack names in the `agent_session_stopped` event."""
        with self.workspace.lock:
            stopped = [
                m
                for m in self.workspace.streaming_messages()
                if m.channel == channel and m.in_thread(thread_ts)
            ]
            for message in stopped:
                message.streaming = False
        return [m.ts for m in stopped]

    # --- what tests read ---

    @property
    def calls(self) -> list[Call]:
        with self._lock:
            return list(self._calls)

    def calls_to(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    # --- distribution mode: installs through OAuth ---

    def accept_client(self, client_id: str, client_secret: str) -> None:
        """The app's credentials, which oauth.v2.access checks."""
        self.client_id, self.client_secret = client_id, client_secret

    def approve_install(
        self,
        team_id: str | None,
        *,
        enterprise_id: str | None = None,
        is_enterprise_install: bool = False,
        rotating: bool = False,
        token_lifetime_s: int = ROTATED_TOKEN_LIFETIME_S,
    ) -> str:
        """What Slack does when an admin approves the install on its authorize page: a
        one-time `code` for the redirect, exchanged once with oauth.v2.access for a new bot
        token of that workspace (with a refresh token when `rotating`, the token then
        expiring after `token_lifetime_s`)."""
        code = f"code-{next(self._token_ids)}-{uuid_hex()}"
        number = next(self._token_ids)
        owner = team_id or enterprise_id or "none"
        installed = Installed(
            team_id=team_id,
            enterprise_id=enterprise_id,
            is_enterprise_install=is_enterprise_install,
            bot_token=f"xoxb-{owner}-{number}-{uuid_hex()}",
            refresh_token=f"xoxe-1-{owner}-{number}-{uuid_hex()}" if rotating else None,
            lifetime_s=token_lifetime_s,
        )
        with self._lock:
            self._codes[code] = installed
        return code

    def installed_token(self, team_id: str | None, enterprise_id: str | None = None) -> str:
        """The newest bot token handed to this workspace (or organisation)."""
        with self._lock:
            tokens = [
                token
                for token, installed in self._installed.items()
                if (installed.team_id, installed.enterprise_id) == (team_id, enterprise_id)
                and token not in self._revoked
            ]
        assert tokens, f"no installation of {team_id or enterprise_id}"
        return tokens[-1]

    def issued_tokens(self, team_id: str | None, enterprise_id: str | None = None) -> set[str]:
        """Every bot token this workspace was handed, revoked ones included."""
        with self._lock:
            return {
                token
                for token, installed in self._installed.items()
                if (installed.team_id, installed.enterprise_id) == (team_id, enterprise_id)
            }

    def revoke_token(self, token: str) -> None:
        """An admin revoked this token (or it expired): every call with it is refused with
        `token_revoked`, as Slack answers."""
        with self._lock:
            self._revoked.add(token)

    def revoke_tokens_of(self, team_id: str | None, enterprise_id: str | None = None) -> None:
        """The app was uninstalled: every token of that workspace stops working."""
        with self._lock:
            for token, installed in self._installed.items():
                if (installed.team_id, installed.enterprise_id) == (team_id, enterprise_id):
                    self._revoked.add(token)

    def calls_with_token(self, token: str) -> list[Call]:
        return [c for c in self.calls if c.token == token]

    def team_of(self, call: Call) -> str | None:
        """The workspace whose token made `call` (None: not an installed workspace's)."""
        with self._lock:
            installed = self._installed.get(call.token or "")
        return installed.team_id or installed.enterprise_id if installed else None

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        """Messages of the thread as the user sees them, oldest first: the parent if it is an
        ordinary message, then the replies."""
        return self.workspace.thread(channel, thread_ts)

    def bot_messages(self, channel: str, thread_ts: str) -> list[Message]:
        with self.workspace.lock:  # copies of the bot's only (tests poll long threads)
            thread = self.workspace.thread(channel, thread_ts, copied=False)
            return [copy.deepcopy(m) for m in thread if m.is_bot]

    def messages(self, channel: str | None = None) -> list[Message]:
        """Every message in the workspace (or in one channel), oldest first."""
        found = self.workspace.all_messages()
        return found if channel is None else [m for m in found if m.channel == channel]

    def finished_bot_messages(self, channel: str) -> int:
        """How many of the bot's messages in the channel are finished (not streaming)."""
        return self.workspace.count(lambda m: m.channel == channel and m.is_bot and not m.streaming)

    def tasks(self, channel: str, thread_ts: str) -> list[Task]:
        """The tasks the bot's streamed messages in the thread show, as the person sees
        them: each task's latest update (with its sources), oldest task first."""
        return [t for m in self.bot_messages(channel, thread_ts) for t in tasks_of(m.chunks)]

    def statuses(self, channel: str, thread_ts: str) -> list[StatusUpdate]:
        """Every assistant.threads.setStatus of the thread, in order."""
        return self.workspace.statuses(channel, thread_ts)

    def current_status(self, channel: str, thread_ts: str) -> str:
        """The status line a user sees now ("" once the bot replied, as in Slack)."""
        return self.workspace.current_status(channel, thread_ts)

    def suggested_prompts(self, channel: str, thread_ts: str) -> list[SuggestedPrompts]:
        """Every setSuggestedPrompts of the thread, in order (the last one is shown)."""
        return self.workspace.prompts(channel, thread_ts)

    def titles(self, channel: str, thread_ts: str) -> list[str]:
        return self.workspace.titles(channel, thread_ts)

    def messages_tab_prompts(self, channel: str) -> list[SuggestedPrompts]:
        """Every setSuggestedPrompts without a thread (agent_view's Messages tab), in order."""
        return self.workspace.prompts(channel, "")

    def session(self, channel: str, thread_ts: str) -> AgentSession | None:
        """The agent_view session of a conversation (None until Orion created one)."""
        return self.workspace.session(channel, thread_ts)

    def home_views(self, user: str, team: str | None = None) -> list[dict[str, Any]]:
        """Every Home tab view published for `user` (views.publish), oldest first; in
        `team` only, when given (the same user id in two workspaces is two people)."""
        with self._lock:
            views = json.loads(json.dumps(self._views.get(user, [])))
        return [v for v in views if team is None or v["team_id"] == team]

    def home_view(self, user: str, team: str | None = None) -> dict[str, Any] | None:
        """The Home tab `user` sees now: the latest view published for them."""
        views = self.home_views(user, team)
        return views[-1] if views else None

    def files(self, channel: str | None = None) -> list[UploadedFile]:
        """Files shared (files.completeUploadExternal), in order; in one channel if given."""
        with self.workspace.lock:
            shared = [copy.deepcopy(f) for f in self._files.values() if f.message_ts is not None]
        return [f for f in shared if channel is None or channel in f.channels]

    def dm_channel(self, user: str, team: str | None = None) -> str:
        """The DM between `user` (of `team`, in distribution mode) and the app, as
        conversations.open answers it: `D` and the user id's tail unless `set_dm_channel`
        said otherwise."""
        with self._lock:
            return self._dms.get((team, user)) or self._dms.get((None, user)) or f"D{user[1:]}"

    def set_dm_channel(self, user: str, channel: str, team: str | None = None) -> None:
        with self._lock:
            self._dms[(team, user)] = channel

    def wait_for(
        self, predicate: Callable[[], T], timeout: float = PATIENCE_S, what: str = "condition"
    ) -> T:
        """Poll `predicate` until truthy and return its value (sync code only)."""
        return wait_until(predicate, timeout, lambda: self._waited_for(what))

    async def wait_for_async(
        self,
        predicate: Callable[[], T],
        timeout: float = PATIENCE_S,  # noqa: ASYNC109 - same signature as wait_for
        what: str = "condition",
    ) -> T:
        """Poll `predicate` until truthy, yielding to the running loop between polls."""
        return await wait_until_async(predicate, timeout, lambda: self._waited_for(what))

    def _waited_for(self, what: str) -> str:
        recent = ", ".join(f"{c.method}{'!' + c.error if c.error else ''}" for c in self.calls)
        return f"{what} (Slack calls so far: {recent or 'none'})"

    # --- what tests write ---

    def new_ts(self) -> str:
        """A fresh ts from the workspace clock."""
        return self.workspace.new_ts()

    def open_assistant_thread(self, channel: str = "D1", ts: str | None = None) -> str:
        """Create the root message Slack makes when a user opens an assistant thread (subtype
        `assistant_app_thread`) and return its ts, the `thread_ts` of the thread's events
        (`ts`: a given one; Slack's are unique within a channel only). Without a root or
        replies, conversations.replies answers `thread_not_found` — which Bolt's default
        thread-context store calls on every say()."""
        ts = ts or self.workspace.new_ts()
        root = Message(
            ts=ts,
            channel=channel,
            thread_ts=ts,
            text="New Assistant Thread",
            user=BOT_USER_ID,
            subtype=ASSISTANT_THREAD_ROOT,
        )
        self.workspace.add(root)
        return ts

    def add_user_message(
        self, channel: str, thread_ts: str | None, user: str, text: str, ts: str | None = None
    ) -> str:
        """Put a human's message into the workspace (the event itself is sent separately)."""
        ts = ts or self.workspace.new_ts()
        message = Message(ts=ts, channel=channel, thread_ts=thread_ts, text=text, user=user)
        self.workspace.add(message)
        return ts

    def add_bot_message(
        self,
        channel: str,
        thread_ts: str | None,
        text: str,
        *,
        bot_id: str,
        app_id: str | None = None,
        user: str | None = None,
        username: str | None = None,
        integration: bool = False,
    ) -> str:
        """Another app's message (`bot_id`, `app_id`, and its bot `user`), or — with
        `integration` — an incoming webhook's or workflow's (Slack's `bot_message`: a bot
        id, no user, and the `username` its sender chose)."""
        ts = self.workspace.new_ts()
        message = Message(
            ts=ts,
            channel=channel,
            thread_ts=thread_ts,
            text=text,
            user=None if integration else user,
            bot_id=bot_id,
            app_id=app_id or "A0OTHERAPP",
            username=username,
            subtype="bot_message" if integration else None,
        )
        self.workspace.add(message)
        return ts

    def add_channel(
        self,
        channel: str,
        *,
        name: str | None = None,
        members: tuple[str, ...] = (),
        private: bool = False,
        orion: bool = True,
        shared_externally: bool = False,
        workspaces: tuple[str, ...] = (TEAM_ID,),
    ) -> None:
        """A channel with these `members` (and Orion's bot user, when `orion`), in these
        `workspaces` of an organisation (several: shared across it)."""
        with self.workspace.lock:
            self.workspace.channels[channel] = Channel(
                channel,
                name or channel.lower(),
                private=private,
                shared_externally=shared_externally,
                members=[*members, *([BOT_USER_ID] if orion else [])],
                workspaces=workspaces,
            )

    def add_guest(
        self, user: str, channels: tuple[str, ...], *, single_channel: bool = False
    ) -> None:
        """`user` is a guest invited to `channels`: multi-channel (`is_restricted`), or
        single-channel (`is_ultra_restricted` too), as users.info says of them."""
        self.set_user(user, is_restricted=True, is_ultra_restricted=single_channel)
        with self.workspace.lock:
            for channel in channels:
                state = self.workspace.channels[channel]
                state.members = [*state.members, user]

    def change_channel(self, channel: str, **fields: Any) -> None:
        """What a person or admin does to a channel: `private=True` (made private),
        `archived=True`, `shared_externally=True` (Slack Connect), `name=` (renamed)."""
        with self.workspace.lock:
            state = self.workspace.channels[channel]
            for name, value in fields.items():
                setattr(state, name, value)

    def remove_from_channel(self, channel: str, user: str = BOT_USER_ID) -> None:
        """`user` leaves the channel (by default Orion's bot user: the app was removed)."""
        with self.workspace.lock:
            state = self.workspace.channels[channel]
            state.members = [m for m in state.members if m != user]

    def set_user(self, user_id: str, **fields: Any) -> None:
        """Override fields of users.info for `user_id` (e.g. real_name, tz, profile)."""
        with self.workspace.lock:
            self.workspace.users.setdefault(user_id, {}).update(fields)

    def response_answers(self, response_url: str) -> list[dict[str, Any]]:
        """What the app posted to this response_url, in order."""
        hook = response_url.split("/actions/", 1)[1]
        return [
            dict(c.args)
            for c in self.calls_to("response_url")
            if c.headers.get("X-Fake-Path") == hook
        ]

    def new_response_url(self) -> str:
        """A response_url for interactivity payloads; posts to it are recorded as calls to
        the pseudo-method "response_url"."""
        return f"{self.root_url}/actions/{TEAM_ID}/{next(self._response_urls)}/fake"

    # --- Web API methods (run under the workspace lock) ---

    def _oauth_access(self, args: dict[str, Any]) -> dict[str, Any]:
        if args.get("grant_type") == "refresh_token":
            return self._refresh(str(args.get("refresh_token") or ""))
        with self._lock:
            installed = self._codes.pop(str(args.get("code") or ""), None)
            if installed is None:
                raise SlackError("invalid_code")
            self._installed[installed.bot_token] = installed
            if installed.refresh_token is not None:
                self._refresh_tokens[installed.refresh_token] = installed
        return self._granted(installed)

    def _refresh(self, refresh_token: str) -> dict[str, Any]:
        """Token rotation: a new bot token (and refresh token) for an expiring one."""
        with self._lock:
            old = self._refresh_tokens.pop(refresh_token, None)
            if old is None:
                raise SlackError("invalid_refresh_token")
            number = next(self._token_ids)
            owner = old.team_id or old.enterprise_id or "none"
            new = Installed(
                team_id=old.team_id,
                enterprise_id=old.enterprise_id,
                is_enterprise_install=old.is_enterprise_install,
                bot_token=f"xoxb-{owner}-{number}-{uuid_hex()}",
                refresh_token=f"xoxe-1-{owner}-{number}-{uuid_hex()}",
                lifetime_s=ROTATED_TOKEN_LIFETIME_S,
            )
            self._revoked.add(old.bot_token)
            self._installed[new.bot_token] = new
            self._refresh_tokens[str(new.refresh_token)] = new
        return {
            "access_token": new.bot_token,
            "refresh_token": new.refresh_token,
            "expires_in": ROTATED_TOKEN_LIFETIME_S,
            "token_type": "bot",
            "scope": "chat:write",
        }

    def _granted(self, installed: Installed) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "app_id": APP_ID,
            "authed_user": {"id": "UINSTALLER"},
            "scope": "assistant:write,chat:write,im:history,files:write,im:write",
            "token_type": "bot",
            "access_token": installed.bot_token,
            "bot_user_id": BOT_USER_ID,
            "team": {"id": installed.team_id, "name": f"Team {installed.team_id}"}
            if installed.team_id and not installed.is_enterprise_install
            else None,
            "enterprise": {"id": installed.enterprise_id, "name": "Org"}
            if installed.enterprise_id
            else None,
            "is_enterprise_install": installed.is_enterprise_install,
        }
        if installed.refresh_token is not None:
            answer |= {"refresh_token": installed.refresh_token, "expires_in": installed.lifetime_s}
        return answer

    def _auth_revoke(self, args: dict[str, Any]) -> dict[str, Any]:
        """The calling token stops working (an installation's last bot token: the app is
        gone from that workspace)."""
        installed = self._calling
        if installed is None:
            raise SlackError("invalid_auth")
        self._revoked.add(installed.bot_token)
        return {"revoked": True}

    def _auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        installed = self._calling
        if installed is not None:  # an installed workspace's token: its own ids
            return {
                "url": f"https://{(installed.team_id or 'org').lower()}.slack.com/",
                "team": f"Team {installed.team_id}",
                "user": "orion",
                "team_id": installed.team_id,
                "enterprise_id": installed.enterprise_id,
                "user_id": BOT_USER_ID,
                "bot_id": BOT_ID,
                "app_id": APP_ID,
                "is_enterprise_install": installed.is_enterprise_install,
            }
        return {
            "url": "https://orion-test.slack.com/",
            "team": "Orion Test",
            "user": "orion",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "app_id": APP_ID,
            "is_enterprise_install": False,
        }

    def _check_can_post(self, channel: str) -> None:
        """Slack refuses a bot's message in a channel it is not in, or one archived."""
        state = self.workspace.channels.get(channel)
        if state is None:
            return  # a DM, or a channel the test did not describe
        if state.archived:
            raise SlackError("is_archived")
        if BOT_USER_ID not in state.members:
            raise SlackError("not_in_channel")

    def _post_message(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = _required(args, "channel")
        self._check_can_post(channel)
        markdown = args.get("markdown_text")
        _check_markdown(markdown)
        _check_message(args)
        text = markdown if markdown is not None else args.get("text") or ""
        blocks = args.get("blocks") or []
        if not text and not blocks and not args.get("attachments"):
            raise SlackError("no_text")
        message = self.workspace.add(
            Message(
                ts=self.workspace.new_ts(),
                channel=channel,
                thread_ts=args.get("thread_ts") or None,
                text=text,
                user=BOT_USER_ID,
                bot_id=BOT_ID,
                blocks=list(blocks),
                metadata=args.get("metadata") or None,
                posted=True,
                unfurl_links=_flag(args.get("unfurl_links")),
                unfurl_media=_flag(args.get("unfurl_media")),
            )
        )
        return {"channel": channel, "ts": message.ts, "message": message.to_api()}

    def _post_ephemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        """A line only one person sees: kept as the call alone (`calls_to`)."""
        _check_message(args)
        self._check_can_post(_required(args, "channel"))
        return {}

    def _own_message(self, args: dict[str, Any]) -> Message:
        message = self.workspace.get(_required(args, "channel"), _required(args, "ts"))
        if message is None:
            raise SlackError("message_not_found")
        if not message.is_bot:
            raise SlackError("cant_update_message")
        return message

    def _update(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._own_message(args)
        markdown = args.get("markdown_text")
        _check_markdown(markdown)
        _check_message(args)
        if markdown is not None:
            message.text = markdown
        elif "text" in args:
            message.text = args["text"] or ""
        if "blocks" in args:
            message.blocks = list(args["blocks"] or [])
        if args.get("metadata"):
            message.metadata = args["metadata"]
        message.edited = True
        api = message.to_api()
        return {"channel": message.channel, "ts": message.ts, "text": message.text, "message": api}

    def _delete(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._own_message(args)
        message.deleted = True
        return {"channel": message.channel, "ts": message.ts}

    def _start_stream(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = _required(args, "channel")
        thread_ts = _required(args, "thread_ts")
        self._check_can_post(channel)
        if channel in self.workspace.channels and not (
            args.get("recipient_user_id") and args.get("recipient_team_id")
        ):
            # docs.slack.dev chat.startStream: both are required when streaming to channels.
            raise SlackError("invalid_arguments")
        self._check_task_display(args)
        mode = args.get("task_display_mode")
        if mode is not None and mode not in TASK_DISPLAY_MODES:
            raise SlackError("invalid_arguments")
        text, chunks = _stream_text(args)
        message = self.workspace.add(
            Message(
                ts=self.workspace.new_ts(),
                channel=channel,
                thread_ts=thread_ts,
                text=text,
                user=BOT_USER_ID,
                bot_id=BOT_ID,
                streaming=True,
                chunks=chunks,
                task_display_mode=mode,
            )
        )
        return {"channel": channel, "ts": message.ts}

    def _streaming_message(self, args: dict[str, Any]) -> Message:
        message = self._own_message(args)
        if not message.streaming:
            raise SlackError(EXPIRED)
        return message

    def _append_stream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._streaming_message(args)
        self._check_task_display(args)
        with self._lock:
            stream_break = self._stream_break
        if stream_break is not None and len(message.text) >= stream_break[0]:
            if stream_break[1] == EXPIRED:
                message.streaming = False
            raise SlackError(stream_break[1])
        text, chunks = _stream_text(args)
        message.text += text
        message.chunks.extend(chunks)
        return {"channel": message.channel, "ts": message.ts}

    def _stop_stream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._streaming_message(args)
        self._check_task_display(args)
        session_status = args.get("session_status") or "active"  # Slack's default
        if session_status not in SESSION_STATUSES:
            raise SlackError("invalid_arguments")
        text, chunks = _stream_text(args)
        message.text += text
        message.chunks.extend(chunks)
        if args.get("blocks"):
            message.blocks = list(args["blocks"])
        if args.get("metadata"):
            message.metadata = args["metadata"]
        message.streaming = False
        # The thread's agent session (agent_view) takes `session_status` as the stream ends.
        self.workspace.stream_stopped(message.channel, message.thread_ts, session_status)
        return {"channel": message.channel, "ts": message.ts, "message": message.to_api()}

    def _set_status(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = _required(args, "channel_id"), _required(args, "thread_ts")
        if "status" not in args:
            raise SlackError("invalid_arguments")
        loading = args.get("loading_messages")
        if loading is not None and len(loading) > LOADING_MESSAGES_LIMIT:
            raise SlackError("invalid_arguments")
        update = StatusUpdate(args["status"], list(loading) if loading is not None else None)
        self.workspace.set_status(channel, thread_ts, update)
        return {}

    def _set_suggested_prompts(self, args: dict[str, Any]) -> dict[str, Any]:
        """With `thread_ts`, a thread's prompts (assistant_view); without, the prompts at the
        top of the app's Messages tab (agent_view), kept under the thread ts ""."""
        channel, prompts = _required(args, "channel_id"), _required(args, "prompts")
        thread_ts = args.get("thread_ts") or ""
        if thread_ts and self.agent_view:
            return {}  # agent_view: prompts for a thread are accepted and never shown
        self.workspace.set_prompts(
            channel, thread_ts, SuggestedPrompts(list(prompts), args.get("title"))
        )
        return {}

    def _set_session_status(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = _required(args, "channel_id"), _required(args, "thread_ts")
        status = args.get("status")
        if status not in SESSION_STATUSES:
            raise SlackError("invalid_status")
        title = args.get("title")
        self.workspace.set_session_status(channel, thread_ts, status, title)
        return {"status": status, "agent_status": status}

    def _rename_session(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = _required(args, "channel_id"), _required(args, "thread_ts")
        title = _required(args, "title")
        if not 1 <= len(title) <= SESSION_TITLE_LIMIT:
            raise SlackError("invalid_title")
        if not self.workspace.rename_session(channel, thread_ts, title):
            raise SlackError("session_not_found")
        return {}

    def _set_title(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = _required(args, "channel_id"), _required(args, "thread_ts")
        self.workspace.set_title(channel, thread_ts, _required(args, "title"))
        return {}

    def _replies(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = _required(args, "channel"), _required(args, "ts")
        with self.workspace.lock:  # only the page is copied (to_api), under the lock
            messages = self.workspace.thread(channel, thread_ts, with_root=True, copied=False)
            if not messages:
                raise SlackError("thread_not_found")
            # Slack returns the parent first whatever the time window; the window filters
            # replies.
            parent = [m for m in messages if m.ts == thread_ts]
            every_reply = [m for m in messages if m.ts != thread_ts]
            replies = _in_window(every_reply, args)
            with_metadata = _truthy(args.get("include_all_metadata"))
            shown, more = _page(parent + replies, args)
            page = [m.to_api(include_metadata=with_metadata) for m in shown]
        if parent and every_reply and shown and shown[0] is parent[0]:
            # The parent says how many replies the thread has, and the newest one's ts.
            page[0] |= {"reply_count": len(every_reply), "latest_reply": every_reply[-1].ts}
        return _messages_page(page, more)

    def _history(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = _required(args, "channel")
        messages = _in_window(self.workspace.channel_top_level(channel), args)
        with_metadata = _truthy(args.get("include_all_metadata"))
        newest_first = [m.to_api(include_metadata=with_metadata) for m in reversed(messages)]
        page, more = _page(newest_first, args)
        return _messages_page(page, more)

    def _conversation_info(self, args: dict[str, Any]) -> dict[str, Any]:
        """A DM as the bot sees it; a channel from the workspace's channels — one the bot
        cannot see (private without it, or never made) is `channel_not_found`."""
        channel = _required(args, "channel")
        if channel.startswith("D"):
            return {
                "channel": {
                    "id": channel,
                    "is_im": True,
                    "is_channel": False,
                    "is_private": True,
                    "is_archived": False,
                    "context_team_id": TEAM_ID,
                }
            }
        return {"channel": self._visible_channel(channel).info()}

    def _visible_channel(self, channel: str) -> Channel:
        state = self.workspace.channels.get(channel)
        if state is None or (state.private and BOT_USER_ID not in state.members):
            raise SlackError("channel_not_found")
        return state

    def _conversation_members(self, args: dict[str, Any]) -> dict[str, Any]:
        """The channel's members, paged (`limit`, `cursor`) as Slack pages them."""
        state = self._visible_channel(_required(args, "channel"))
        members = [{"id": member} for member in state.members]
        page, next_cursor = _page(members, args)
        return {
            "members": [m["id"] for m in page],
            "response_metadata": {"next_cursor": next_cursor},
        }

    def _user_info(self, args: dict[str, Any]) -> dict[str, Any]:
        user_id = _required(args, "user")
        user: dict[str, Any] = {
            "id": user_id,
            "team_id": TEAM_ID,
            "name": user_id.lower(),
            "real_name": f"User {user_id}",
            "tz": "Europe/London",
            "tz_label": "Greenwich Mean Time",
            "tz_offset": 0,
            "is_bot": user_id == BOT_USER_ID,
            "deleted": False,
            # Slack says of everyone whether they are an admin or owner, and whether a
            # guest: multi-channel (`is_restricted`) or single-channel (both true).
            "is_admin": False,
            "is_owner": False,
            "is_primary_owner": False,
            "is_restricted": False,
            "is_ultra_restricted": False,
            "profile": {
                "real_name": f"User {user_id}",
                "display_name": user_id.lower(),
                "email": f"{user_id.lower()}@example.com",
            },
        }
        user.update(self.workspace.users.get(user_id, {}))
        return {"user": user}

    def _open_conversation(self, args: dict[str, Any]) -> dict[str, Any]:
        """conversations.open with one user: the app's DM with them."""
        if args.get("channel"):
            return {"channel": {"id": args["channel"]}, "already_open": True}
        users = [u for u in str(_required(args, "users")).split(",") if u]
        if len(users) != 1:
            raise SlackError("not_supported")  # group DMs: not needed by Orion
        channel = self.dm_channel(users[0], self._calling.team_id if self._calling else None)
        return {"no_op": True, "already_open": True, "channel": {"id": channel}}

    def _publish_view(self, args: dict[str, Any]) -> dict[str, Any]:
        user = _required(args, "user_id")
        view = _required(args, "view")
        if isinstance(view, str):
            view = json.loads(view)
        _check_view(view)
        installed = self._calling
        published = {
            **copy.deepcopy(view),
            "id": f"V{next(self._view_ids):08d}",
            # The workspace whose token published it (distribution mode), else the one.
            "team_id": installed.team_id if installed is not None else TEAM_ID,
            "app_id": APP_ID,
            "bot_id": BOT_ID,
            "state": {"values": {}},
            "hash": f"{time.time():.6f}",
            "private_metadata": view.get("private_metadata", ""),
            "callback_id": view.get("callback_id", ""),
        }
        with self._lock:
            self._views.setdefault(user, []).append(published)
        return {"view": published}

    def _get_upload_url(self, args: dict[str, Any]) -> dict[str, Any]:
        filename = _required(args, "filename")
        try:
            length = int(_required(args, "length"))
        except ValueError:
            raise SlackError("invalid_arguments") from None
        file_id = f"F{next(self._file_ids):08d}"
        self._files[file_id] = UploadedFile(file_id, filename, length)
        return {"upload_url": f"{self.root_url}/upload/{file_id}", "file_id": file_id}

    def _complete_upload(self, args: dict[str, Any]) -> dict[str, Any]:
        files = _required(args, "files")
        if isinstance(files, str):
            files = json.loads(files)
        channels = [c for c in str(args.get("channels") or "").split(",") if c]
        if args.get("channel_id"):
            channels.insert(0, args["channel_id"])
        done = []
        for item in files:
            uploaded = self._files.get(item.get("id"))
            if uploaded is None or uploaded.content is None:
                raise SlackError("file_not_found")  # never uploaded (step 2 missing)
            if len(uploaded.content) != uploaded.length:
                raise SlackError("file_size_mismatch")
            uploaded.title = item.get("title") or uploaded.filename
            done.append(uploaded)
        for channel in channels:
            share = self.workspace.add(
                Message(
                    ts=self.workspace.new_ts(),
                    channel=channel,
                    thread_ts=args.get("thread_ts") or None,
                    text=args.get("initial_comment") or "",
                    user=BOT_USER_ID,
                    bot_id=BOT_ID,
                    subtype="file_share",
                )
            )
            for uploaded in done:
                uploaded.channels.append(channel)
                uploaded.initial_comment = args.get("initial_comment")
                uploaded.message_ts = share.ts
        return {
            "files": [
                {
                    "id": f.id,
                    "name": f.filename,
                    "title": f.title,
                    "size": f.length,
                    "channels": list(f.channels),
                }
                for f in done
            ]
        }

    def _connections_open(self, args: dict[str, Any]) -> dict[str, Any]:
        if self.socket_mode is None or not self.socket_mode.running:
            raise SlackError("socket_mode_not_enabled")
        return {"url": self.socket_mode.issue_url()}


def uuid_hex() -> str:
    return uuid.uuid4().hex[:12]


def _fallback(args: dict[str, Any]) -> dict[str, Any]:
    return {}


async def _parse(request: web.Request) -> _Request:
    """Arguments from the query string, a form body or a JSON body — slack_sdk uses all three."""
    args: dict[str, Any] = dict(request.query)
    if request.can_read_body:
        if request.content_type == "application/json":
            body = await request.json()
            if isinstance(body, dict):
                args.update(body)
        else:
            form = await request.post()
            args.update({k: v for k, v in form.items() if isinstance(v, str)})
    for key in _JSON_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value[:1] in ("[", "{"):
            args[key] = json.loads(value)
    token = args.pop("token", None)
    auth = request.headers.get("Authorization", "")
    if auth.startswith("Bearer "):
        token = auth.removeprefix("Bearer ")
    return _Request(request.match_info["method"], args, token, CIMultiDict(request.headers))


def _flag(value: object) -> bool | None:
    """A boolean argument as Slack reads it (JSON `false`, or a form's "false"/"0")."""
    if value is None:
        return None
    return str(value).lower() not in ("false", "0", "")


def _required(args: dict[str, Any], name: str) -> Any:
    value = args.get(name)
    if value is None or value == "":
        is_channel = name in ("channel", "channel_id")
        raise SlackError("channel_not_found" if is_channel else "invalid_arguments")
    return value


def _check_markdown(text: str | None) -> None:
    if text is not None and len(text) > MARKDOWN_TEXT_LIMIT:
        raise SlackError("msg_too_long")


def _check_message(args: dict[str, Any]) -> None:
    """Slack's limits on one message: `text`, all its markdown blocks together, and each
    section's text."""
    if len(args.get("text") or "") > TEXT_LIMIT:
        raise SlackError("msg_too_long")
    blocks = args.get("blocks") or []
    markdown = sum(len(b.get("text") or "") for b in blocks if b.get("type") == "markdown")
    if markdown > MARKDOWN_TEXT_LIMIT:
        raise SlackError("invalid_blocks")
    for block in blocks:
        text = block.get("text") if block.get("type") == "section" else None
        if isinstance(text, dict) and len(text.get("text") or "") > SECTION_TEXT_LIMIT:
            raise SlackError("invalid_blocks")


def _check_view(view: Any) -> None:
    """Slack's limits on a published Home tab view; beyond them views.publish fails."""
    if not isinstance(view, dict) or view.get("type") != "home":
        raise SlackError("invalid_arguments")
    blocks = view.get("blocks")
    if not isinstance(blocks, list) or len(blocks) > VIEW_BLOCKS_LIMIT:
        raise SlackError("invalid_arguments")
    if len(view.get("private_metadata") or "") > PRIVATE_METADATA_LIMIT:
        raise SlackError("invalid_arguments")
    block_ids = [b["block_id"] for b in blocks if "block_id" in b]
    if len(block_ids) != len(set(block_ids)):
        raise SlackError("invalid_arguments")  # duplicate block_id
    for block in blocks:
        _check_block(block)


def _check_block(block: dict[str, Any]) -> None:
    kind = block.get("type")
    if kind == "header":
        _check_text(block.get("text"), HEADER_TEXT_LIMIT, plain=True)
    elif kind == "section":
        _check_text(block.get("text"), SECTION_TEXT_LIMIT)
        if block.get("accessory") is not None:
            _check_element(block["accessory"])
    elif kind == "context":
        elements = block.get("elements") or []
        if not 0 < len(elements) <= CONTEXT_ELEMENTS_LIMIT:
            raise SlackError("invalid_arguments")
        for element in elements:
            _check_text(element, SECTION_TEXT_LIMIT)
    elif kind == "actions":
        elements = block.get("elements") or []
        if not 0 < len(elements) <= ACTIONS_ELEMENTS_LIMIT:
            raise SlackError("invalid_arguments")
        action_ids = [e.get("action_id") for e in elements]
        if len(action_ids) != len(set(action_ids)):
            raise SlackError("invalid_arguments")  # duplicate action_id in one block
        for element in elements:
            _check_element(element)
    elif kind not in ("divider", "image", "rich_text", "markdown"):
        raise SlackError("invalid_arguments")


def _check_element(element: dict[str, Any]) -> None:
    if element.get("type") != "button":
        return
    _check_text(element.get("text"), BUTTON_TEXT_LIMIT, plain=True)
    if len(element.get("value") or "") > BUTTON_VALUE_LIMIT:
        raise SlackError("invalid_arguments")
    if not 0 < len(element.get("action_id") or "") <= ACTION_ID_LIMIT:
        raise SlackError("invalid_arguments")
    confirm = element.get("confirm")
    if confirm is not None:
        _check_text(confirm.get("title"), CONFIRM_TITLE_LIMIT, plain=True)
        _check_text(confirm.get("text"), CONFIRM_TEXT_LIMIT)
        _check_text(confirm.get("confirm"), CONFIRM_BUTTON_LIMIT, plain=True)
        _check_text(confirm.get("deny"), CONFIRM_BUTTON_LIMIT, plain=True)


def _check_text(text: Any, limit: int, *, plain: bool = False) -> None:
    kinds = ("plain_text",) if plain else ("plain_text", "mrkdwn")
    if not isinstance(text, dict) or text.get("type") not in kinds:
        raise SlackError("invalid_arguments")
    if not 0 < len(text.get("text") or "") <= limit:
        raise SlackError("invalid_arguments")


def _stream_text(args: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """Text of a stream call: `markdown_text` plus `chunks` of type markdown_text (slack_sdk's
    ChatStream sends only chunks); other chunk types are returned separately."""
    markdown = args.get("markdown_text")
    _check_markdown(markdown)
    text = markdown or ""
    others: list[dict[str, Any]] = []
    for chunk in args.get("chunks") or []:
        if chunk.get("type") not in CHUNK_TYPES:
            raise SlackError("invalid_arguments")
        if chunk.get("type") == "markdown_text":
            _check_markdown(chunk.get("text"))
            text += chunk.get("text") or ""
        else:
            _check_chunk(chunk)
            others.append(chunk)
    _check_markdown(text)
    return text, others


def _check_chunk(chunk: dict[str, Any]) -> None:
    """Slack's shape of a task or plan update; anything else is refused."""
    title = chunk.get("title") or ""
    if chunk["type"] == "plan_update" and not 0 < len(title) <= TASK_TEXT_LIMIT:
        raise SlackError("invalid_arguments")
    if chunk["type"] != "task_update":
        return
    if not isinstance(chunk.get("id"), str) or not chunk["id"]:
        raise SlackError("invalid_arguments")
    if chunk.get("status") not in TASK_STATUSES:
        raise SlackError("invalid_arguments")
    if not 0 < len(chunk.get("title") or "") <= TASK_TEXT_LIMIT:
        raise SlackError("invalid_arguments")
    for name in ("details", "output"):
        if len(chunk.get(name) or "") > TASK_TEXT_LIMIT:
            raise SlackError("invalid_arguments")
    for source in chunk.get("sources") or []:
        url, label = source.get("url"), source.get("text")
        if (
            source.get("type") != "url"
            or not isinstance(url, str)
            or not url.startswith("https://")
        ):
            raise SlackError("invalid_arguments")
        if not isinstance(label, str) or not label:
            raise SlackError("invalid_arguments")


def _truthy(value: Any) -> bool:
    return value in (True, 1, "1", "true", "True")


def _in_window(messages: list[Message], args: dict[str, Any]) -> list[Message]:
    inclusive = _truthy(args.get("inclusive"))
    oldest, latest = args.get("oldest"), args.get("latest")

    def keep(m: Message) -> bool:
        ts = float(m.ts)
        if oldest is not None and (ts < float(oldest) or (ts == float(oldest) and not inclusive)):
            return False
        return not (
            latest is not None and (ts > float(latest) or (ts == float(latest) and not inclusive))
        )

    return [m for m in messages if keep(m)]


def _messages_page(page: list[dict[str, Any]], next_cursor: str) -> dict[str, Any]:
    return {
        "messages": page,
        "has_more": bool(next_cursor),
        "response_metadata": {"next_cursor": next_cursor},
    }


def _page(items: list[T], args: dict[str, Any]) -> tuple[list[T], str]:
    """One page of `items` and the next cursor ("" on the last page)."""
    start = int(base64.b64decode(args["cursor"]).decode()) if args.get("cursor") else 0
    limit = int(args.get("limit") or 1000)
    end = start + limit
    more = base64.b64encode(str(end).encode()).decode() if end < len(items) else ""
    return items[start:end], more


__all__ = [
    "Call",
    "FakeSlack",
    "Message",
    "SlackError",
    "StatusUpdate",
    "SuggestedPrompts",
    "UploadedFile",
]
