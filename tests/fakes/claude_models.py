"""What FakeClaude knows of each model, and the requests the real API refuses for it.

From the model pages on platform.claude.com ("What's new in Claude Sonnet 5.5", "What's new
in Claude Haiku 5.5" and their migration guides): on both, adaptive thinking is on by
default, thinking blocks are tied to the model and the conversation, the minimum cacheable
prompt is 512 tokens, and non-default sampling parameters are a 400. Sonnet 5.5 refuses
`thinking: {"type": "disabled"}` (its lowest setting is `between_tools`, at low, medium or
high effort) and forced tool use; Haiku 5.5 accepts `disabled` at low, medium and high
effort. Any other model id (the tests' own) is an older model: it thinks only when asked,
and caches from 1,024 tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EFFORTS = ("low", "medium", "high", "xhigh", "max")
# Efforts at which thinking can be off (`disabled`, `between_tools`).
THINKING_OFF_EFFORTS = ("low", "medium", "high")


@dataclass(frozen=True)
class ModelRules:
    # Adaptive thinking on by default, thinking blocks bound to the model and the
    # conversation: a 5.5 model.
    current: bool
    min_cacheable_tokens: int
    accepts_disabled: bool
    accepts_between_tools: bool
    accepts_forced_tool_choice: bool
    default_effort: str | None


SONNET_5_5 = "claude-sonnet-5-5"
HAIKU_5_5 = "claude-haiku-5-5"

MODELS = {
    SONNET_5_5: ModelRules(
        current=True,
        min_cacheable_tokens=512,
        accepts_disabled=False,
        accepts_between_tools=True,
        accepts_forced_tool_choice=False,
        default_effort="high",
    ),
    HAIKU_5_5: ModelRules(
        current=True,
        min_cacheable_tokens=512,
        accepts_disabled=True,
        accepts_between_tools=False,
        accepts_forced_tool_choice=True,
        default_effort="medium",
    ),
}
OLDER = ModelRules(
    current=False,
    min_cacheable_tokens=1024,
    accepts_disabled=True,
    accepts_between_tools=False,
    accepts_forced_tool_choice=True,
    default_effort=None,
)


def rules_for(model: object) -> ModelRules:
    return MODELS.get(str(model), OLDER)


def thinking_type(body: dict[str, Any]) -> str:
    """The thinking the request runs with: what it asks, else the model's default."""
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and isinstance(thinking.get("type"), str):
        return str(thinking["type"])
    return "adaptive" if rules_for(body.get("model")).current else "disabled"


def effort(body: dict[str, Any]) -> str | None:
    config = body.get("output_config")
    value = config.get("effort") if isinstance(config, dict) else None
    return value if isinstance(value, str) else rules_for(body.get("model")).default_effort


def refusal_of(body: dict[str, Any]) -> str | None:
    """Why the real API would answer this request with a 400; None when it would not."""
    model = str(body.get("model"))
    rules = rules_for(model)
    kind = thinking_type(body)
    level = effort(body)
    if level is not None and level not in EFFORTS:
        return f"output_config.effort: Input should be one of {', '.join(EFFORTS)}"
    if kind not in ("adaptive", "enabled", "disabled", "between_tools"):
        return f"thinking.type: unknown thinking type {kind!r}"
    if rules.current:
        if kind == "disabled" and not rules.accepts_disabled:
            return (
                f'thinking.type: "disabled" is not supported on {model}; send '
                '{"type": "between_tools"} to turn off up-front thinking'
            )
        if kind == "between_tools" and not rules.accepts_between_tools:
            return f'thinking.type: "between_tools" is not supported on {model}'
        if kind == "enabled":
            return f'thinking.type: "enabled" is not supported on {model}; use "adaptive"'
        if kind in ("disabled", "between_tools") and level not in THINKING_OFF_EFFORTS:
            return f"output_config.effort: {level!r} is not supported with thinking {kind!r}"
        for name in ("temperature", "top_p", "top_k"):
            if body.get(name) is not None:
                return f"{name}: sampling parameters are not supported on {model}"
    elif kind == "between_tools":
        return f'thinking.type: "between_tools" is not supported on {model}'
    choice = body.get("tool_choice")
    forced = isinstance(choice, dict) and choice.get("type") in ("any", "tool")
    if forced and not rules.accepts_forced_tool_choice:
        return f"tool_choice: forced tool use is not supported on {model}; use auto or none"
    return None


# The API versions the real API takes (platform.claude.com, "Versions"): anthropic 2.x sends
# 2026-10-21, under which ("Migrating to API version 2026-10-21") sampling parameters are
# gone even at their defaults, an assistant message may not hold a `document` block, and a
# user message may not hold a text block with citations, directly or in a search result.
API_VERSIONS = ("2023-06-01", "2026-10-21")


def version_refusal(version: str, body: dict[str, Any]) -> str | None:
    """Why the real API would refuse `body` under `version` with a 400; None when it would not."""
    if version not in API_VERSIONS:
        return f"anthropic-version: {version!r} is not a supported API version"
    if version == "2023-06-01":
        return None
    for name in ("temperature", "top_p", "top_k"):
        if name in body:
            return f"{name}: Extra inputs are not permitted in API version {version}"
    for i, message in enumerate(body.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else []):
            where = f"messages.{i}.content.{j}"
            role = message.get("role")
            if role == "assistant" and _kind(block) == "document":
                return f"{where}: document blocks are not allowed in assistant messages"
            if role == "user" and _cites(block):
                return f"{where}: text blocks in user messages cannot have citations"
    return None


def _kind(block: object) -> object:
    return block.get("type") if isinstance(block, dict) else None


def _cites(block: object) -> bool:
    """A text block with citations, or a search result or tool result holding one."""
    if not isinstance(block, dict):
        return False
    if block.get("type") == "text":
        return bool(block.get("citations"))
    inner = block.get("content") if block.get("type") in ("search_result", "tool_result") else None
    return isinstance(inner, list) and any(_cites(b) for b in inner)
