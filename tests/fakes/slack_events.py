"""Events API and interactivity payloads as Slack sends them, and request signing.

Builders return the whole `event_callback` envelope, shaped so that Bolt's AsyncAssistant
recognises it (slack_bolt/request/payload_utils.py): a user message in an assistant thread is
a `message` event with `channel_type: "im"`, a `thread_ts`, no `subtype` and no `bot_id`.
Deliver them over HTTP (`json_body` + `sign`) or Socket Mode (`send_events_api(payload)`).
"""

from __future__ import annotations

import json
import secrets
import string
import time
import uuid
from typing import Any
from urllib.parse import urlencode

from slack_sdk.signature import SignatureVerifier

from tests.fakes.slack_model import APP_ID, BOT_ID, BOT_USER_ID, TEAM_ID, new_ts

VERIFICATION_TOKEN = "fake-verification-token"


def as_slack_sends(typed: str) -> str:
    """A message's text as Slack delivers what its author typed: `&`, `<` and `>` written
    as `&amp;`, `&lt;` and `&gt;` (its own links and mentions are the only `<…>` in it)."""
    return typed.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _event_id() -> str:
    alphabet = string.ascii_uppercase + string.digits
    return "Ev" + "".join(secrets.choice(alphabet) for _ in range(10))


def event_callback(event: dict[str, Any], *, team_id: str = TEAM_ID) -> dict[str, Any]:
    """Wrap `event` in the envelope Slack posts to the Request URL."""
    return {
        "token": VERIFICATION_TOKEN,
        "team_id": team_id,
        "context_team_id": team_id,
        "context_enterprise_id": None,
        "api_app_id": APP_ID,
        "event": event,
        "type": "event_callback",
        "event_id": _event_id(),
        "event_time": int(time.time()),
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": team_id,
                "user_id": BOT_USER_ID,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
        "event_context": "4-" + uuid.uuid4().hex,
    }


def _assistant_thread_event(
    kind: str, user: str, channel: str, thread_ts: str, context: dict[str, Any] | None
) -> dict[str, Any]:
    return event_callback(
        {
            "type": kind,
            "assistant_thread": {
                "user_id": user,
                "context": context if context is not None else {},
                "channel_id": channel,
                "thread_ts": thread_ts,
            },
            "event_ts": new_ts(),
        }
    )


def assistant_thread_started(
    user: str, channel: str, thread_ts: str, context: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The user opened a new assistant thread. `context` is e.g.
    `{"channel_id": "C1", "team_id": "T1", "enterprise_id": None}` (the channel they were in)."""
    return _assistant_thread_event("assistant_thread_started", user, channel, thread_ts, context)


def assistant_thread_context_changed(
    user: str, channel: str, thread_ts: str, context: dict[str, Any] | None = None
) -> dict[str, Any]:
    return _assistant_thread_event(
        "assistant_thread_context_changed", user, channel, thread_ts, context
    )


def _rich_text(text: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "rich_text",
            "block_id": uuid.uuid4().hex[:5],
            "elements": [
                {"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}
            ],
        }
    ]


def _message_event(
    user: str, channel: str, text: str, ts: str | None, thread_ts: str | None
) -> dict[str, Any]:
    ts = ts or new_ts()
    event: dict[str, Any] = {
        "user": user,
        "type": "message",
        "ts": ts,
        "client_msg_id": str(uuid.uuid4()),
        "text": text,
        "team": TEAM_ID,
        "blocks": _rich_text(text),
        "channel": channel,
        "event_ts": ts,
        "channel_type": "im",
    }
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
        event["parent_user_id"] = BOT_USER_ID
    return event_callback(event)


def user_message_in_thread(
    user: str, channel: str, thread_ts: str, text: str, ts: str | None = None
) -> dict[str, Any]:
    """A user's message in an assistant thread (DM channel). Pass the `ts` returned by
    `FakeSlack.add_user_message` so the thread and the event agree."""
    return _message_event(user, channel, text, ts, thread_ts)


def top_level_dm(user: str, channel: str, text: str, ts: str | None = None) -> dict[str, Any]:
    """A DM outside any thread: matches no AsyncAssistant listener; in agent_view, the start
    of a new conversation (its `ts` is the conversation's thread)."""
    return _message_event(user, channel, text, ts, None)


def app_mention(
    user: str,
    channel: str,
    text: str,
    ts: str | None = None,
    *,
    thread_ts: str | None = None,
    shared_externally: bool = False,
) -> dict[str, Any]:
    """`user` mentions Orion in a channel (`thread_ts`: in that thread; else at the top,
    where Orion answers in a new thread under the mention). Pass the `ts` of
    `FakeSlack.add_user_message` so the thread and the event agree. `shared_externally`:
    the channel is shared with another organisation (Slack Connect), as the envelope says."""
    ts = ts or new_ts()
    event: dict[str, Any] = {
        "type": "app_mention",
        "user": user,
        "text": text,
        "ts": ts,
        "client_msg_id": str(uuid.uuid4()),
        "team": TEAM_ID,
        "blocks": _rich_text(text),
        "channel": channel,
        "event_ts": ts,
    }
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    payload = event_callback(event)
    payload["is_ext_shared_channel"] = shared_externally
    return payload


def channel_event(kind: str, channel: str, **fields: Any) -> dict[str, Any]:
    """A channel's life as Slack tells apps: `channel_left` (Orion was removed),
    `channel_deleted`, `channel_archive`, `channel_shared`… (`group_*` for private
    channels made before 2021)."""
    return event_callback({"type": kind, "channel": channel, "event_ts": new_ts(), **fields})


def member_left_channel(user: str, channel: str) -> dict[str, Any]:
    return channel_event("member_left_channel", channel, user=user, channel_type="C", team=TEAM_ID)


def member_joined_channel(user: str, channel: str) -> dict[str, Any]:
    """`user` joined `channel` (Orion's bot user: Orion was added to it)."""
    return channel_event(
        "member_joined_channel", channel, user=user, channel_type="C", team=TEAM_ID
    )


def slash_command(
    user: str, channel: str, text: str, *, response_url: str, command: str = "/orion"
) -> bytes:
    """A slash command as Slack posts it: form-encoded fields (deliver with
    `OrionServer.post_form`); Orion answers through `response_url`."""
    return urlencode(
        {
            "token": VERIFICATION_TOKEN,
            "team_id": TEAM_ID,
            "team_domain": "orion-test",
            "channel_id": channel,
            "channel_name": channel.lower(),
            "user_id": user,
            "user_name": user.lower(),
            "command": command,
            "text": text,
            "api_app_id": APP_ID,
            "is_enterprise_install": "false",
            "response_url": response_url,
            "trigger_id": f"{int(time.time())}.{secrets.randbelow(10**9)}.fake",
        }
    ).encode()


def ephemeral_block_actions(
    user: str,
    channel: str,
    blocks: list[dict[str, Any]],
    action_id: str,
    value: str | None = None,
    *,
    response_url: str,
) -> dict[str, Any]:
    """`user` clicks a button of a message only they see (a command's answer, `blocks`),
    as Slack posts it: from that channel, with a response_url. A button with a `confirm`
    dialog is sent only after the person confirmed: this is that payload."""
    block_id, button = find_button({"blocks": blocks}, action_id, value)
    payload = block_actions(
        user,
        channel,
        new_ts(),
        action_id,
        str(button.get("value")),
        block_id=block_id or "actions",
        response_url=response_url,
    )
    payload["container"]["is_ephemeral"] = True
    payload["channel"] = {"id": channel, "name": channel.lower()}
    payload.pop("message")
    return payload


def app_home_opened(user: str, channel: str, tab: str = "messages") -> dict[str, Any]:
    """The person opened the app's Messages tab (agent_view: a conversation may start) or
    its Home tab."""
    return event_callback(
        {
            "type": "app_home_opened",
            "user": user,
            "channel": channel,
            "tab": tab,
            "event_ts": new_ts(),
        }
    )


def app_context_changed(user: str, *channel_ids: str) -> dict[str, Any]:
    """agent_view: what the person is looking at in Slack changed (entities by relevance)."""
    entities = [
        {"type": "slack#/types/channel_id", "value": channel_id, "team_id": TEAM_ID}
        for channel_id in channel_ids
    ]
    return event_callback(
        {
            "type": "app_context_changed",
            "user": user,
            "context": {"entities": entities} if entities else {},
            "event_ts": new_ts(),
        }
    )


def agent_session_stopped(
    user: str, channel: str, thread_ts: str, streaming_message_ts: list[str] | None = None
) -> dict[str, Any]:
    """agent_view: the person pressed Stop while Orion was working in this conversation."""
    return event_callback(
        {
            "type": "agent_session_stopped",
            "user": user,
            "channel": channel,
            "thread_ts": thread_ts,
            "streaming_message_ts": streaming_message_ts or [],
            "event_ts": new_ts(),
        }
    )


def bot_message_in_thread(
    channel: str, thread_ts: str, text: str, ts: str | None = None
) -> dict[str, Any]:
    """The echo of the bot's own reply, which Slack also delivers as a message event."""
    payload = _message_event(BOT_USER_ID, channel, text, ts, thread_ts)
    payload["event"].update({"bot_id": BOT_ID, "app_id": APP_ID})
    payload["event"].pop("client_msg_id")
    return payload


def url_verification(challenge: str = "fake-challenge") -> dict[str, Any]:
    return {"token": VERIFICATION_TOKEN, "challenge": challenge, "type": "url_verification"}


def block_actions(
    user: str,
    channel: str,
    message_ts: str,
    action_id: str,
    value: str,
    *,
    thread_ts: str | None = None,
    block_id: str = "actions",
    response_url: str | None = None,
    message: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A button click on a message (interactivity payload). Over HTTP it is sent form-encoded
    (`form_body`); over Socket Mode as an `interactive` envelope. `response_url`: use
    `FakeSlack.new_response_url()` if the app calls `respond`."""
    container: dict[str, Any] = {
        "type": "message",
        "message_ts": message_ts,
        "channel_id": channel,
        "is_ephemeral": False,
    }
    if thread_ts is not None:
        container["thread_ts"] = thread_ts
    default = {"type": "message", "ts": message_ts, "user": BOT_USER_ID, "bot_id": BOT_ID}
    shown = dict(message) if message is not None else default
    if thread_ts is not None:
        shown.setdefault("thread_ts", thread_ts)
    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM_ID},
        "api_app_id": APP_ID,
        "token": VERIFICATION_TOKEN,
        "container": container,
        "trigger_id": f"{int(time.time())}.{secrets.randbelow(10**9)}.fake",
        "team": {"id": TEAM_ID, "domain": "orion-test"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel, "name": "directmessage"},
        "message": shown,
        "state": {"values": {}},
        "actions": [
            {
                "action_id": action_id,
                "block_id": block_id,
                "value": value,
                "type": "button",
                "action_ts": new_ts(),
            }
        ],
    }
    if response_url is not None:
        payload["response_url"] = response_url
    return payload


def buttons(view: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    """Every button of a view, in order, with the block_id of the block that holds it."""
    found: list[tuple[str | None, dict[str, Any]]] = []
    for block in view.get("blocks") or []:
        elements = [block["accessory"]] if "accessory" in block else block.get("elements", [])
        for element in elements:
            if isinstance(element, dict) and element.get("type") == "button":
                found.append((block.get("block_id"), element))
    return found


def find_button(
    view: dict[str, Any], action_id: str, value: str | None = None
) -> tuple[str | None, dict[str, Any]]:
    """The view's button with this action_id (and value, if given), and its block_id;
    fails when the view shows no such button (a person could not click it)."""
    for block_id, button in buttons(view):
        if button.get("action_id") == action_id and value in (None, button.get("value")):
            return block_id, button
    shown = [(b.get("action_id"), b.get("value")) for _, b in buttons(view)]
    raise AssertionError(f"no button {action_id!r} {value!r} in the view; it has {shown}")


def view_block_actions(
    user: str, view: dict[str, Any], action_id: str, value: str | None = None
) -> dict[str, Any]:
    """`user` clicks a button of a published view (an App Home tab), as Slack posts it:
    the view, as published, comes with the click. A button with a `confirm` dialog is
    sent only after the person confirmed: this is that payload.

    The view may be somebody else's: a payload Slack would never send, but which a test
    can, to show that Orion acts on the clicking user only."""
    block_id, button = find_button(view, action_id, value)
    action: dict[str, Any] = {
        "type": "button",
        "action_id": action_id,
        "block_id": block_id or uuid.uuid4().hex[:5],
        "text": button.get("text"),
        "value": button.get("value"),
        "action_ts": new_ts(),
    }
    if "style" in button:
        action["style"] = button["style"]
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM_ID},
        "api_app_id": APP_ID,
        "token": VERIFICATION_TOKEN,
        "container": {"type": "view", "view_id": view.get("id")},
        "trigger_id": f"{int(time.time())}.{secrets.randbelow(10**9)}.fake",
        "team": {"id": TEAM_ID, "domain": "orion-test"},
        "enterprise": None,
        "is_enterprise_install": False,
        "view": view,
        "state": {"values": {}},
        "actions": [action],
    }


# --- HTTP delivery ---


def json_body(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload).encode()


def form_body(payload: dict[str, Any]) -> bytes:
    """Interactivity payloads arrive as `payload=<url-encoded JSON>`."""
    return urlencode({"payload": json.dumps(payload)}).encode()


def sign(body: bytes, secret: str, timestamp: int | None = None) -> dict[str, str]:
    """Slack's request-signing headers for `body`."""
    ts = int(time.time()) if timestamp is None else timestamp
    signature = SignatureVerifier(secret).generate_signature(timestamp=str(ts), body=body)
    return {"X-Slack-Request-Timestamp": str(ts), "X-Slack-Signature": signature}


def signed_headers(
    body: bytes,
    secret: str,
    *,
    content_type: str = "application/json",
    timestamp: int | None = None,
    retry_num: int | None = None,
    retry_reason: str = "http_timeout",
) -> dict[str, str]:
    """All headers of an Events API delivery, including Slack's retry headers when
    `retry_num` is given (Slack redelivers events not acked within 3 s)."""
    headers = {"Content-Type": content_type, **sign(body, secret, timestamp)}
    if retry_num is not None:
        headers["X-Slack-Retry-Num"] = str(retry_num)
        headers["X-Slack-Retry-Reason"] = retry_reason
    return headers


def in_team(
    payload: dict[str, Any],
    team_id: str | None,
    *,
    enterprise_id: str | None = None,
    is_enterprise_install: bool = False,
) -> dict[str, Any]:
    """`payload` (any builder's) as Slack sends it from another workspace — or, with
    `is_enterprise_install`, to an app installed organisation-wide: every field Slack
    fills with the workspace's (and organisation's) id."""
    out = json.loads(json.dumps(payload))
    if out.get("type") == "event_callback":
        out["team_id"] = team_id
        out["context_team_id"] = team_id
        out["context_enterprise_id"] = enterprise_id
        if enterprise_id is not None:
            out["enterprise_id"] = enterprise_id
        for authorization in out.get("authorizations") or []:
            authorization["team_id"] = None if is_enterprise_install else team_id
            authorization["enterprise_id"] = enterprise_id
            authorization["is_enterprise_install"] = is_enterprise_install
        event = out.get("event") or {}
        if "team" in event:
            event["team"] = team_id
        return out
    # Interactivity (block_actions): the team and the clicking user's team.
    out["team"] = {"id": team_id, "domain": f"team-{team_id}".lower()}
    if enterprise_id is not None:
        out["enterprise"] = {"id": enterprise_id, "name": "Org"}
    out["is_enterprise_install"] = is_enterprise_install
    if isinstance(out.get("user"), dict):
        out["user"]["team_id"] = team_id
    return out


def app_uninstalled(team_id: str, *, enterprise_id: str | None = None) -> dict[str, Any]:
    """What Slack sends when a workspace removes the app."""
    return in_team(
        event_callback({"type": "app_uninstalled", "event_ts": new_ts()}, team_id=team_id),
        team_id,
        enterprise_id=enterprise_id,
    )


def tokens_revoked(
    team_id: str, *, bot: list[str] | None = None, oauth: list[str] | None = None
) -> dict[str, Any]:
    tokens = {"bot": bot or [], "oauth": oauth or []}
    event = {"type": "tokens_revoked", "tokens": tokens, "event_ts": new_ts()}
    return in_team(event_callback(event, team_id=team_id), team_id)
