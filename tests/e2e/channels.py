"""What people do with Orion in channels, and what they see there: shared by the
channel tests (end to end and the attack suite)."""

from __future__ import annotations

from typing import Any

from tests.e2e.conversation import FIRST_EVENT_TIMEOUT
from tests.fakes import slack_events as events
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

ANA, BEN, CARA = "U0ANA1", "U0BEN1", "U0CARA1"  # Ana and Ben work together; Cara elsewhere
ADMIN = "U0ADMIN1"
PUBLIC, OTHER_PUBLIC, PRIVATE = "C0PUBLIC1", "C0PUBLIC2", "C0PRIVATE1"


def set_up_channels(slack: FakeSlack) -> None:
    """Two public channels and a private one, Orion in each; Cara only in the second."""
    slack.add_channel(PUBLIC, name="launch", members=(ANA, BEN, ADMIN))
    slack.add_channel(OTHER_PUBLIC, name="billing", members=(ANA, CARA))
    slack.add_channel(PRIVATE, name="secret-plans", members=(ANA, BEN), private=True)
    slack.set_user(ADMIN, is_admin=True)


def mention(
    orion: OrionServer,
    slack: FakeSlack,
    user: str,
    channel: str,
    text: str,
    *,
    thread_ts: str | None = None,
    shared_externally: bool = False,
) -> dict[str, Any]:
    """`user` writes `text`, mentioning Orion, at the top of `channel` or in `thread_ts`;
    returns the event as delivered (its thread: `thread_of`)."""
    ts = slack.add_user_message(channel, thread_ts, user, f"<@UBOT> {text}")
    payload = events.app_mention(
        user,
        channel,
        f"<@UBOT> {text}",
        ts=ts,
        thread_ts=thread_ts,
        shared_externally=shared_externally,
    )
    assert orion.post_event(payload).status_code == 200
    return payload


def thread_of(payload: dict[str, Any]) -> str:
    event = payload["event"]
    return str(event.get("thread_ts") or event["ts"])


def say(slack: FakeSlack, user: str, channel: str, thread_ts: str, text: str) -> str:
    """A member writes in the thread without mentioning Orion (Slack tells Orion nothing)."""
    return slack.add_user_message(channel, thread_ts, user, text)


def answers(slack: FakeSlack, channel: str, thread_ts: str) -> list[str]:
    """Orion's finished messages in the thread."""
    return [m.text for m in slack.bot_messages(channel, thread_ts) if not m.streaming]


def wait_for_answer(
    slack: FakeSlack,
    channel: str,
    thread_ts: str,
    answer: str,
    timeout: float = FIRST_EVENT_TIMEOUT,
) -> None:
    slack.wait_for(
        lambda: answer in answers(slack, channel, thread_ts),
        timeout=timeout,
        what=f"the answer {answer!r} in {channel}",
    )


def ephemerals(slack: FakeSlack, user: str) -> list[str]:
    """The lines only `user` saw (chat.postEphemeral), in order."""
    return [
        str(c.args.get("text"))
        for c in slack.calls_to("chat.postEphemeral")
        if c.args.get("user") == user and not c.error
    ]


def command(
    orion: OrionServer, slack: FakeSlack, user: str, channel: str, text: str = ""
) -> dict[str, Any]:
    """`user` types `/orion {text}` in `channel`; Orion's answer (through the response_url)."""
    response_url = slack.new_response_url()
    body = events.slash_command(user, channel, text, response_url=response_url)
    assert orion.post_form(body).status_code == 200
    return responded(slack, response_url)


def click(
    orion: OrionServer,
    slack: FakeSlack,
    user: str,
    channel: str,
    shown: dict[str, Any],
    action_id: str,
    value: str | None = None,
) -> dict[str, Any]:
    """`user` clicks a button of `shown` (a command's answer); Orion's next answer."""
    response_url = slack.new_response_url()
    payload = events.ephemeral_block_actions(
        user, channel, shown.get("blocks") or [], action_id, value, response_url=response_url
    )
    assert orion.post_form(events.form_body(payload)).status_code == 200
    return responded(slack, response_url)


def responded(slack: FakeSlack, response_url: str, timeout: float = 15.0) -> dict[str, Any]:
    """What Orion posted to `response_url`, once it has."""
    answers = slack.wait_for(
        lambda: slack.response_answers(response_url),
        timeout=timeout,
        what=f"an answer through {response_url}",
    )
    return answers[-1]


def shown_text(answer: dict[str, Any]) -> str:
    """Everything an answer through a response_url shows: its text and blocks' texts."""
    parts = [str(answer.get("text") or "")]
    for block in answer.get("blocks") or []:
        text = block.get("text")
        if isinstance(text, dict):
            parts.append(str(text.get("text") or ""))
        for element in block.get("elements") or []:
            if isinstance(element, dict) and element.get("type") == "mrkdwn":
                parts.append(str(element.get("text") or ""))
    return "\n".join(parts)
