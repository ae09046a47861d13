"""A fresh process whose storage is out of reach greets and answers all the same.

The worst conditions for the person's path (docs/architecture.md) say: storage unreachable costs
the first event one storage budget at most, then the breaker skips it; and a fresh
process's greeting needs only Slack and the store. Here a new `orion serve` process
starts with a bucket it cannot reach, in each way a bucket can be out of reach:

- `refused`: nothing listens where the store is (the emulator's address);
- `blackhole`: connects to the store hang (their packets are dropped);
- `no_credentials_server`: production's configuration (no emulator, Application Default
  Credentials), with no credentials configured and a metadata server whose connects hang:
  google-auth's lookup of credentials alone outlasts the whole test.

The first two are forked from the warm Python (tests/warm_python.py: a new Orion process,
nothing of app/ imported, its libraries already are); the third's metadata-server variables
are read when google-auth is imported, so it is a new interpreter, a cold start whole.

Whatever the way, the person sees the thread start's status and a greeting, an answer to
their message, and a greeting in their next thread. Every wait is on a signal, with the
generous timeout of a first event (a fresh process may still be importing).
"""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest

from app.slack.assistant_view import RESTORING_STATUS
from app.slack.conversation.greeting import GENERIC_GREETING
from app.slack.conversation.presence import THINKING_STATUS
from tests import log_events
from tests.e2e import conversation
from tests.e2e.conversation import FIRST_EVENT_TIMEOUT
from tests.fakes import slack_events as events
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.blackhole import Blackhole
from tests.fakes.slack_api import FakeSlack
from tests.orion_process import OrionProcess, free_port, orion_env
from tests.orion_server import SIGNING_SECRET

USER, CHANNEL = "U0OLGA", "D0OLGA"
QUESTION = "What should I prepare for Monday's planning?"
ANSWER = "Bring the roadmap draft and last sprint's numbers."
OUTAGES = ["refused", "blackhole", "no_credentials_server"]


def _out_of_reach(outage: str, blackhole: Blackhole, home: Path, refused: int) -> dict[str, str]:
    """The environment that puts the bucket out of reach in the way `outage` names."""
    if outage == "refused":
        return {"STORAGE_EMULATOR_HOST": f"http://127.0.0.1:{refused}"}
    if outage == "blackhole":
        return {"STORAGE_EMULATOR_HOST": blackhole.url}
    # google-auth reads these (its public environment variables): where the metadata
    # server is, and how long each of its (three) connection attempts may wait.
    return {
        "API_ENDPOINT_OVERRIDE": blackhole.url,
        "GCE_METADATA_IP": blackhole.address,
        "GCE_METADATA_HOST": blackhole.address,
        "GCE_METADATA_TIMEOUT": "600",
        "HOME": str(home),  # no developer's gcloud credentials
    }


def _post(orion: OrionProcess, payload: dict) -> None:
    body = events.json_body(payload)
    headers = {"Content-Type": "application/json", **events.sign(body, SIGNING_SECRET)}
    response = httpx.post(f"{orion.url}/slack/events", content=body, headers=headers, timeout=30)
    assert response.status_code == 200


def _greeting(slack: FakeSlack, orion: OrionProcess, thread_ts: str) -> str:
    _post(orion, events.assistant_thread_started(USER, CHANNEL, thread_ts))
    [greeting] = slack.wait_for(
        lambda: slack.bot_messages(CHANNEL, thread_ts),
        timeout=FIRST_EVENT_TIMEOUT,
        what="the greeting",
    )
    return greeting.text


@pytest.mark.parametrize("outage", OUTAGES)
def test_a_fresh_process_greets_and_answers_while_its_bucket_is_out_of_reach(
    tmp_path: Path, slack: FakeSlack, claude: FakeClaude, outage: str, refused_port: int
) -> None:
    with Blackhole() as blackhole:
        env = orion_env(
            slack_url=slack.url,
            claude_url=claude.url,
            port=free_port(),
            GCS_MEMORIES_BUCKET="orion-out-of-reach",
            **_out_of_reach(outage, blackhole, tmp_path, refused_port),
        )
        log = tmp_path / "orion.log"
        with OrionProcess(env, cwd=tmp_path, log_path=log) as orion:
            # The first thread start of the process: its status at once, then a greeting
            # (a generic one: nothing could be read).
            thread_ts = slack.open_assistant_thread(CHANNEL)
            assert _greeting(slack, orion, thread_ts) == GENERIC_GREETING
            [status, *_] = slack.statuses(CHANNEL, thread_ts)
            assert status.status == RESTORING_STATUS

            # A message is answered: Claude's client does not wait for the store.
            claude.reply(ANSWER)
            ts = slack.add_user_message(CHANNEL, thread_ts, USER, QUESTION)
            _post(orion, events.user_message_in_thread(USER, CHANNEL, thread_ts, QUESTION, ts=ts))
            conversation.wait_for_answer(slack, CHANNEL, thread_ts, ANSWER)
            statuses = [update.status for update in slack.statuses(CHANNEL, thread_ts)]
            assert THINKING_STATUS in statuses

            # And the next conversation is greeted too.
            assert _greeting(slack, orion, slack.open_assistant_thread(CHANNEL)) == GENERIC_GREETING

            # Stopping is not this test's: a drain may wait on the unreachable store until
            # its deadline (tests/e2e/test_graceful_shutdown.py); a second signal ends it
            # at once (or finds it gone).
            orion.signal(signal.SIGTERM)
            orion.wait_logged(log_events.ORION_STOPPING)
            orion.stop()

    for message in slack.bot_messages(CHANNEL, thread_ts):
        assert "Error" not in message.text and "Traceback" not in message.text
