"""The Claude agent loop: stream an answer, run requested tools, repeat until done.

Each Claude call is a Langfuse generation (model, input, output, token usage). Text is
forwarded to the reply sink as it arrives; tool calls are run through the registry and
their results sent back, for at most `max_iterations` calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.agent.memory_tasks import MemoryTasks
from app.agent.reply_sink import ReplySink
from app.agent.tool_registry import ToolRegistry
from app.observability import tracing
from app.observability.logging import get_logger

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

log = get_logger(__name__)

MAX_ITERATIONS = 8
MAX_TOKENS = 4096
TOO_MANY_STEPS_NOTE = (
    "\n\n_I had to stop here: this took more steps than I'm allowed in one reply. "
    "Ask me to continue if you need more._"
)


@dataclass
class LoopResult:
    text: str
    iterations: int
    stop_reason: str | None
    usage: dict[str, int] = field(default_factory=dict)


async def run_agent_loop(
    client: AsyncAnthropic,
    *,
    model: str,
    system: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    tools: ToolRegistry,
    sink: ReplySink,
    max_iterations: int = MAX_ITERATIONS,
    tasks: MemoryTasks | None = None,
) -> LoopResult:
    """Run one turn. Claude API errors propagate; tool errors become tool results. Each
    tool call is shown to the person as a task (`tasks`, by default on `sink`)."""
    tasks = tasks or MemoryTasks(sink)
    conversation = list(messages)
    answer_parts: list[str] = []
    usage = {"input": 0, "output": 0}
    stop_reason: str | None = None

    for iteration in range(1, max_iterations + 1):
        if answer_parts and not answer_parts[-1].endswith("\n"):
            # Text from the previous step and this one would otherwise run together.
            await _emit(sink, answer_parts, "\n\n")
        final = await _stream_one_call(
            client,
            model=model,
            system=system,
            messages=conversation,
            tools=tools,
            sink=sink,
            answer_parts=answer_parts,
        )
        usage["input"] += final.usage.input_tokens
        usage["output"] += final.usage.output_tokens
        stop_reason = final.stop_reason
        tool_uses = [block for block in final.content if block.type == "tool_use"]
        if stop_reason != "tool_use" or not tool_uses:
            return LoopResult("".join(answer_parts).strip(), iteration, stop_reason, usage)

        await sink.show_progress(_progress_for(tool_uses[0].name))
        conversation.append(
            {
                "role": "assistant",
                "content": [b.model_dump(exclude_none=True) for b in final.content],
            }
        )
        results = [await tasks.run(tools, b) for b in tool_uses]
        conversation.append({"role": "user", "content": results})

    log.warning("agent.max_iterations", iterations=max_iterations)
    await _emit(sink, answer_parts, TOO_MANY_STEPS_NOTE)
    return LoopResult("".join(answer_parts).strip(), max_iterations, stop_reason, usage)


async def _stream_one_call(
    client: AsyncAnthropic,
    *,
    model: str,
    system: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    tools: ToolRegistry,
    sink: ReplySink,
    answer_parts: list[str],
) -> Any:
    with tracing.observe(
        "agent.claude",
        as_type="generation",
        model=model,
        input={"system": system, "messages": messages},
    ) as generation:
        request: dict[str, Any] = {
            "model": model,
            "max_tokens": MAX_TOKENS,
            "system": system,
            "messages": messages,
        }
        if tool_params := tools.params():
            request["tools"] = tool_params
        async with client.messages.stream(**request) as stream:
            async for text in stream.text_stream:
                await _emit(sink, answer_parts, text)
            final = await stream.get_final_message()
        generation.update(
            output=[block.model_dump(exclude_none=True) for block in final.content],
            usage_details={"input": final.usage.input_tokens, "output": final.usage.output_tokens},
            metadata={"stop_reason": final.stop_reason},
        )
        return final


async def _emit(sink: ReplySink, answer_parts: list[str], text: str) -> None:
    answer_parts.append(text)
    await sink.append(text)


def _progress_for(tool_name: str) -> str:
    if tool_name == "memory":
        return "is checking its memory..."
    if tool_name == "recall":
        return "is looking through past conversations..."
    return "is working on it..."
