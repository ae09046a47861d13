"""The pinned interface (docs/interface.md) as Claude sees it: with `ANTHROPIC_MODEL` unset, a
person's question goes to a current, non-deprecated Sonnet from the SDK's model list, with
Anthropic's built-in memory tool exactly as the API names it."""

from __future__ import annotations

from typing import Any, Literal, get_args, get_origin

from anthropic.resources.messages.messages import DEPRECATED_MODELS
from anthropic.types import Model

from tests.e2e import conversation
from tests.fakes.anthropic_api import FakeClaude
from tests.fakes.slack_api import FakeSlack
from tests.orion_server import OrionServer

USER, CHANNEL = "U0DESIGN", "D0DESIGN"
MEMORY_TOOL = {"type": "memory_20250818", "name": "memory"}


def _model_ids(annotation: Any) -> list[str]:
    """Every model id the SDK's `Model` type lists (a union of literals and `str`)."""
    ids: list[str] = []
    for arg in get_args(annotation):
        if get_origin(arg) is Literal:
            ids += [value for value in get_args(arg) if isinstance(value, str)]
        elif get_args(arg):
            ids += _model_ids(arg)
    return ids


def test_a_question_goes_to_a_current_sonnet_with_the_built_in_memory_tool(
    orion: OrionServer, slack: FakeSlack, claude: FakeClaude
) -> None:
    assert "anthropic_model" not in orion.settings.model_fields_set, "ANTHROPIC_MODEL unset"
    thread_ts, _ = conversation.open_thread(orion, slack, USER, CHANNEL)
    claude.reply("Paris.")
    conversation.post_user_message(
        orion, slack, USER, CHANNEL, thread_ts, "What is the capital of France?"
    )
    conversation.wait_for_answer(slack, CHANNEL, thread_ts, "Paris.")

    [request] = [r for r in claude.requests if r.get("tools")]
    model = request["model"]
    assert "sonnet" in model
    assert model in _model_ids(Model), f"{model} is not in anthropic {Model}'s list"
    assert model not in DEPRECATED_MODELS
    assert MEMORY_TOOL in request["tools"]
