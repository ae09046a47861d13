"""Intake: what anyone who finds the service URL, or another Slack workspace, can make
Orion do with one request.

Through the real HTTP server on loopback (and Socket Mode for the other-workspace case):
a request is refused on its headers and size before its body is read, on its signature
before anything parses it, and with a 400 — not a 500 — when Slack's signature is there
but the body is not a payload Orion can handle. A correctly signed request from a
workspace other than the one Orion's token belongs to is acknowledged and ignored. The
assertions are what the sender sees (status), what Slack sees (no call) and what is
stored (nothing). How fast and at what memory cost refusals come is measured by
bench/intake.py, not here.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from app.learning.upgrade import LAYOUT_MARKER
from app.memory.homes import preferences_key
from app.runtime.in_flight import in_flight
from app.runtime.slack_intake import MAX_BODY_BYTES
from app.slack.home.memory_view import ACTION_FORGET_EVERYTHING
from tests import log_events
from tests.e2e import conversation
from tests.fakes import slack_events as events
from tests.fakes._waiting import wait_until
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import SIGNING_SECRET, OrionServer
from tests.raw_http import Answer, post_until_answered

USER, CHANNEL = "U0IVAN", "D0IVAN"
OTHER_TEAM = "T0OTHERTEAM"
PREFERENCES = {"name": "Ivan", "language": "Portuguese"}
# A depth the JSON parser itself cannot reach (RecursionError), and one it can, deeper
# than any Slack payload.
DEEP = 100_000
NESTED_PAST_SLACK = 100


# --- sending -----------------------------------------------------------------------------


def _post(orion: OrionServer, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return orion.http.post("/slack/events", content=body, headers=headers)


def _signed(body: bytes, content_type: str = "application/json") -> dict[str, str]:
    return {"Content-Type": content_type, **events.sign(body, SIGNING_SECRET)}


def _forged(content_type: str = "application/json") -> dict[str, str]:
    """Headers an attacker can send: fresh, well formed, and signed with the wrong secret."""
    return {"Content-Type": content_type, **events.sign(b"", "not-the-signing-secret")}


def _send(
    orion: OrionServer, headers: dict[str, str], chunks: Iterator[bytes], *, chunked: bool
) -> Answer:
    url = f"{orion.url}/slack/events"
    return asyncio.run(post_until_answered(url, headers, chunks, chunked=chunked))


def _pieces(body: bytes, size: int = 64 * 1024) -> Iterator[bytes]:
    view = memoryview(body)
    for start in range(0, len(body), size):
        yield bytes(view[start : start + size])


def _from_team(payload: dict[str, Any], team: str) -> dict[str, Any]:
    """The same payload as another workspace where the app is installed would send it:
    signed with the same (per-app) secret."""
    payload = copy.deepcopy(payload)
    if payload.get("type") == "event_callback":
        payload["team_id"] = payload["context_team_id"] = team
        for authorization in payload["authorizations"]:
            authorization["team_id"] = team
    else:  # a click
        payload["team"]["id"] = team
        payload["user"]["team_id"] = team
    return payload


# --- what was done ------------------------------------------------------------------------


def _slack_calls(slack: FakeSlack) -> list[str]:
    """Every Web API method Orion called, but auth.test: asked once at start (whose token
    this is), whatever arrives."""
    return [call.method for call in slack.calls if call.method != "auth.test"]


def _stored(memory_dir: Path) -> list[str]:
    """Every object kept, but the layout mark every start makes (app/learning/upgrade.py)."""
    if not memory_dir.exists():
        return []
    kept = (p.relative_to(memory_dir).as_posix() for p in memory_dir.rglob("*") if p.is_file())
    return sorted(key for key in kept if key != LAYOUT_MARKER)


def _seed_preferences(memory_dir: Path) -> Path:
    path = memory_dir / preferences_key(USER)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(PREFERENCES))
    return path


def _deep_json(depth: int) -> str:
    return "[" * depth + "]" * depth


# --- signed but not a payload: 400, nothing done -------------------------------------------

MALFORMED = {
    "nested beyond the parser": (
        b'{"type": "event_callback", "event": ' + _deep_json(DEEP).encode() + b"}",
        "application/json",
    ),
    "nested beyond any Slack payload": (
        json.dumps(
            {"type": "event_callback", "event": json.loads(_deep_json(NESTED_PAST_SLACK))}
        ).encode(),
        "application/json",
    ),
    "a JSON array": (b'[{"type": "event_callback"}]', "application/json"),
    "not JSON": (b'{"type": "event_callback", this is not json', "application/json"),
    "a click nested beyond the parser": (
        b"payload="
        + quote('{"type": "block_actions", "actions": ' + _deep_json(DEEP) + "}").encode(),
        "application/x-www-form-urlencoded",
    ),
    "a click whose payload is not JSON": (
        b"payload=" + quote("{nope").encode(),
        "application/x-www-form-urlencoded",
    ),
}


@pytest.mark.parametrize("shape", MALFORMED)
def test_a_signed_body_orion_cannot_handle_is_refused_400_and_nothing_is_posted(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path, shape: str
) -> None:
    body, content_type = MALFORMED[shape]

    response = _post(orion, body, _signed(body, content_type))

    assert response.status_code == 400
    assert response.text == "malformed request body"
    orion.wait_idle()
    assert _slack_calls(slack) == []
    assert _stored(memory_dir) == []
    [line] = orion.wait_logged(log_events.SLACK_REQUEST_MALFORMED)
    assert line["severity"] == "WARNING" and line["reason"]
    assert orion.http.get("/healthz").status_code == 200


def test_a_nested_unsigned_body_is_refused_401(orion: OrionServer, slack: FakeSlack) -> None:
    body, content_type = MALFORMED["nested beyond the parser"]
    # Statuses taken apart from the calls: a failure must not print the nested body.
    forged = _post(orion, body, _forged(content_type)).status_code
    unsigned = _post(orion, body, {"Content-Type": content_type}).status_code
    assert (forged, unsigned) == (401, 401)
    orion.wait_idle()
    assert _slack_calls(slack) == []
    assert orion.logged(log_events.SLACK_REQUEST_MALFORMED) == [], "refused before it was parsed"


def test_a_body_that_is_not_utf8_is_refused_as_unsigned(
    orion: OrionServer, slack: FakeSlack
) -> None:
    """Slack sends UTF-8 only, and the SDK's verifier checks the body as text: even with an
    HMAC over its raw bytes, such a body carries no signature Orion accepts."""
    body = b'{"type": "event_callback", "event": {"text": "\xff\xfe"}}'
    timestamp = str(int(time.time()))
    digest = hmac.new(
        SIGNING_SECRET.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256
    ).hexdigest()
    headers = {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": f"v0={digest}",
    }

    assert _post(orion, body, headers).status_code == 401
    orion.wait_idle()
    assert _slack_calls(slack) == []


# --- refused before the body is read ---------------------------------------------------------


def _stale() -> dict[str, str]:
    return events.sign(b"", SIGNING_SECRET, timestamp=int(time.time()) - 6 * 60)


NOT_SIGNED = {
    "no signature headers": {},
    "a garbled signature": {
        "X-Slack-Request-Timestamp": str(int(time.time())),
        "X-Slack-Signature": "v0=zz",
    },
    "a timestamp that is not a number": {
        "X-Slack-Request-Timestamp": "soon",
        "X-Slack-Signature": "v0=" + "0" * 64,
    },
    "a stale timestamp": "stale",
}


@pytest.mark.parametrize("case", NOT_SIGNED)
def test_missing_garbled_or_stale_signature_headers_are_refused_without_reading_the_body(
    orion: OrionServer, slack: FakeSlack, case: str
) -> None:
    signature = _stale() if NOT_SIGNED[case] == "stale" else NOT_SIGNED[case]
    # It declares 30 MiB and sends none of it: the answer can only come from the headers.
    headers = {"Content-Type": "application/json", "Content-Length": str(30 * 2**20)}

    answer = _send(orion, {**headers, **signature}, iter(()), chunked=False)

    assert (answer.status, answer.body_bytes_sent) == (401, 0)
    assert _slack_calls(slack) == []


def _too_large(orion: OrionServer, *, chunked: bool) -> tuple[Answer, int]:
    """A 30 MiB body, signed with the real secret: the size alone decides."""
    body = b'{"type": "event_callback", "padding": "' + b"x" * (30 * 2**20) + b'"}'
    headers = _signed(body)
    if not chunked:
        headers["Content-Length"] = str(len(body))
    return _send(orion, headers, _pieces(body), chunked=chunked), len(body)


def test_a_30_mib_body_with_content_length_is_refused_413_before_it_is_sent(
    orion: OrionServer, slack: FakeSlack
) -> None:
    answer, size = _too_large(orion, chunked=False)

    assert answer.status == 413
    assert answer.body_bytes_sent < size, "answered while the body was still on its way"
    [line] = orion.wait_logged(log_events.SLACK_REQUEST_TOO_LARGE)
    assert line["content_length"] == str(size)
    assert _slack_calls(slack) == []
    assert orion.http.get("/healthz").status_code == 200


def test_a_chunked_body_is_refused_413_once_it_passes_the_cap(
    orion: OrionServer, slack: FakeSlack
) -> None:
    answer, size = _too_large(orion, chunked=True)

    assert answer.status == 413
    assert answer.body_bytes_sent < size, "refused while the body was still on its way"
    assert _slack_calls(slack) == []
    assert orion.http.get("/healthz").status_code == 200


def test_a_chunked_event_within_the_cap_is_handled(orion: OrionServer, slack: FakeSlack) -> None:
    thread_ts = slack.open_assistant_thread(CHANNEL)
    payload = events.assistant_thread_started(USER, CHANNEL, thread_ts)
    # Padded to near the cap, as a large but genuine payload would be.
    payload["padding"] = "x" * (MAX_BODY_BYTES - 10_000)
    body = events.json_body(payload)

    answer = _send(orion, _signed(body), _pieces(body, 4096), chunked=True)

    assert answer.status == 200
    greeting = slack.wait_for(lambda: slack.bot_messages(CHANNEL, thread_ts), what="greeting")
    assert "Orion" in greeting[0].text


# --- unsigned requests of every kind ---------------------------------------------------------


def test_an_unsigned_click_is_refused_401_and_nothing_is_erased(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    preferences = _seed_preferences(memory_dir)
    view = {
        "id": "V0FORGED",
        "type": "home",
        "blocks": [
            {
                "type": "actions",
                "block_id": "memory",
                "elements": [
                    {
                        "type": "button",
                        "action_id": ACTION_FORGET_EVERYTHING,
                        "text": {"type": "plain_text", "text": "Forget everything"},
                        "value": "everything",
                    }
                ],
            }
        ],
    }
    body = events.form_body(events.view_block_actions(USER, view, ACTION_FORGET_EVERYTHING))

    response = _post(orion, body, _forged("application/x-www-form-urlencoded"))

    assert response.status_code == 401
    orion.wait_idle()
    handled = [line for line in orion.log_lines() if line["message"].endswith(log_events.DONE)]
    assert handled == [], "never handed to Bolt"
    assert json.loads(preferences.read_text()) == PREFERENCES
    assert _slack_calls(slack) == []


def test_url_verification_still_answers_its_challenge_and_only_when_signed(
    orion: OrionServer,
) -> None:
    body = events.json_body(events.url_verification("intake-challenge"))

    signed = _post(orion, body, _signed(body))
    assert signed.status_code == 200 and signed.json() == {"challenge": "intake-challenge"}
    assert _post(orion, body, _forged()).status_code == 401


def test_ssl_check_is_answered_only_when_signed(orion: OrionServer) -> None:
    body = b"ssl_check=1&token=" + events.VERIFICATION_TOKEN.encode()
    form = "application/x-www-form-urlencoded"

    assert _post(orion, body, _signed(body, form)).status_code == 200
    assert _post(orion, body, _forged(form)).status_code == 401


# --- another workspace -----------------------------------------------------------------------


def test_a_signed_event_from_another_team_is_acked_and_ignored(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    thread_ts = slack.open_assistant_thread(CHANNEL)
    foreign = _from_team(events.assistant_thread_started(USER, CHANNEL, thread_ts), OTHER_TEAM)

    response = orion.post_event(foreign)

    assert response.status_code == 200, "acknowledged, so Slack does not redeliver it"
    orion.wait_idle()
    [line] = [
        x
        for x in orion.logged(log_events.SLACK_OTHER_TEAM_IGNORED)
        if x["event_id"] == foreign["event_id"]
    ]
    assert line["team_id"] == OTHER_TEAM and line["installed_team_id"] == events.TEAM_ID
    assert line["severity"] == "WARNING"
    assert slack.calls_to("chat.postMessage") == []
    assert slack.calls_to("assistant.threads.setStatus") == []
    assert _slack_calls(slack) == []
    assert _stored(memory_dir) == []
    assert orion.handled(foreign["event_id"]) == []

    # The same event from Orion's own workspace is handled (and stores its claim): the
    # check above could have failed.
    conversation.open_thread(orion, slack, USER, CHANNEL)
    assert _stored(memory_dir) != []


def test_a_signed_click_from_another_team_is_ignored(
    orion: OrionServer, slack: FakeSlack, memory_dir: Path
) -> None:
    preferences = _seed_preferences(memory_dir)
    assert orion.post_event(events.app_home_opened(USER, CHANNEL, tab="home")).status_code == 200
    [view] = slack.wait_for(lambda: slack.home_views(USER), what="the Home tab")
    published = len(slack.calls_to("views.publish"))
    click = _from_team(events.view_block_actions(USER, view, ACTION_FORGET_EVERYTHING), OTHER_TEAM)

    assert orion.post_form(events.form_body(click)).status_code == 200

    orion.wait_idle()
    [line] = orion.wait_logged(log_events.SLACK_OTHER_TEAM_IGNORED)
    assert line["team_id"] == OTHER_TEAM and line["event_id"] == click["trigger_id"]
    assert json.loads(preferences.read_text()) == PREFERENCES, "nothing erased"
    assert len(slack.calls_to("views.publish")) == published


def test_over_socket_mode_an_event_from_another_team_is_acked_and_ignored(
    socket_slack: FakeSlack, orion_socket: None
) -> None:
    server = socket_slack.socket_mode
    assert server is not None
    server.wait_connected()
    foreign_ts = socket_slack.open_assistant_thread(CHANNEL)
    foreign = _from_team(events.assistant_thread_started(USER, CHANNEL, foreign_ts), OTHER_TEAM)

    assert server.wait_ack(server.send_events_api(foreign))
    # A genuine thread start after it is greeted; once nothing is running any more, the
    # foreign one, had it reached a listener, would have been greeted too.
    thread_ts = socket_slack.open_assistant_thread(CHANNEL)
    server.send_events_api(events.assistant_thread_started(USER, CHANNEL, thread_ts))
    socket_slack.wait_for(lambda: socket_slack.bot_messages(CHANNEL, thread_ts), what="greeting")
    wait_until(lambda: in_flight.count == 0, what="nothing in flight")

    assert socket_slack.bot_messages(CHANNEL, foreign_ts) == []
    assert socket_slack.statuses(CHANNEL, foreign_ts) == []
