"""The person's path under slow storage, with the budget left at its default
(`MEMORY_LOAD_TIMEOUT_S`, 2 s: docs/interface.md, README "Configuration"): a message whose
person's memory does not arrive in time is still answered, Claude is sent no memory it did not
get, and the turn that went out without memory is logged as such (what bench/burst.py
counts)."""

from __future__ import annotations

from collections.abc import Callable

from tests.e2e import conversation
from tests.e2e.conversation import main_requests
from tests.e2e.memory_bucket import Bucket
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.fault_proxy import FaultyProxy
from tests.fakes.slack_api import FakeSlack
from tests.layout import preferences_key
from tests.orion_server import OrionServer

USER, CHANNEL = "U0VERA", "D0VERA"
WARMUP, WARMUP_CHANNEL = "U0WARM", "D0WARM"
ANSWER = "Here is the rollout checklist, step by step."


def test_a_message_whose_memory_is_late_is_answered_and_logged_as_without_memory(
    gcs_proxy: FaultyProxy,
    orion_on_bucket: Callable[..., OrionServer],
    bucket: Bucket,
    slack: FakeSlack,
    claude: FakeClaude,
) -> None:
    bucket.write(preferences_key(USER), '{"response_style": "haiku only"}')
    orion = orion_on_bucket()
    assert "memory_load_timeout_s" not in orion.settings.model_fields_set
    # The services and the storage client built first: the budget is spent on the store.
    conversation.open_thread(orion, slack, WARMUP, WARMUP_CHANNEL)
    thread_ts = slack.open_assistant_thread(CHANNEL)
    stalled = gcs_proxy.add_rule(f"people%2F{USER}%2F", hold=True)

    claude.reply(ANSWER)
    conversation.post_user_message(
        orion, slack, USER, CHANNEL, thread_ts, "Give me the rollout checklist."
    )
    conversation.wait_for_answer(slack, CHANNEL, thread_ts, ANSWER)
    [without] = orion.wait_logged("memory.without_memory")
    gcs_proxy.clear_rules()
    orion.wait_idle()

    assert stalled.hits >= 1, "the person's objects were asked for, and held"
    assert without["severity"] == "WARNING" and without["reason"] == "timed out"
    [request] = main_requests(claude, orion)
    assert "haiku only" not in str(request["system"])
