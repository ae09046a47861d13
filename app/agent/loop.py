"""The Claude agent loop: stream an answer, run requested tools, repeat until done, at most
`max_iterations` calls, each a traced generation and a cache breakpoint; thinking blocks go back
unchanged and their text is never kept (docs/claude-settings.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.agent import stop_reasons
from app.agent.memory_tasks import MemoryTasks
from app.agent.prompt_cache import logged_usage, usage_figures, with_conversation_breakpoint
from app.agent.reply_sink import ReplySink
from app.agent.thinking import ANSWER_THINKING, Thinking
from app.agent.tool_registry import ToolRegistry
from app.observability import tracing
from app.observability.logging import get_logger

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

log = get_logger(__name__)

MAX_ITERATIONS = 8
# Room for a long answer and, with adaptive thinking, the thinking before it (thinking
# tokens count toward this limit).
MAX_TOKENS = 8192


@dataclass
class LoopResult:
    # The answer as written (Claude's text and Orion's notes in it), without the progress
    # notes shown between tool calls: what is summarised and kept as history.
    text: str
    iterations: int
    stop_reason: str | None

    @property
    def refused(self) -> bool:
        """Claude's safety classifiers ended the answer: nothing of the turn is kept."""
        return self.stop_reason == "refusal"


class _Answer:
    """What the person is shown, and the part of it that is the answer's text."""

    def __init__(self, sink: ReplySink) -> None:
        self._sink = sink
        self._shown: list[str] = []
        self._kept: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self._kept).strip()

    async def write(self, piece: str, *, kept: bool = True) -> None:
        self._shown.append(piece)
        if kept:
            self._kept.append(piece)
        await self._sink.append(piece)

    async def separate(self) -> None:
        """Start a new paragraph, so that two steps' text does not run together."""
        if self._shown and not self._shown[-1].endswith("\n"):
            await self.write("\n\n", kept=bool(self._kept))

    async def end_with(self, note: str) -> None:
        await self.separate()
        await self.write(note)


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
    thinking: Thinking = ANSWER_THINKING,
) -> LoopResult:
    """Run one turn. Claude API errors propagate; tool errors become tool results. Each
    tool call is shown to the person as a task (`tasks`, by default on `sink`)."""
    tasks = tasks or MemoryTasks(sink)
    conversation = list(messages)
    answer = _Answer(sink)
    stop_reason: str | None = None
    paused = False

    for iteration in range(1, max_iterations + 1):
        if not paused:
            await answer.separate()
        final = await _stream_one_call(
            client,
            model=model,
            system=system,
            messages=conversation,
            tools=tools,
            answer=answer,
            thinking=thinking,
            iteration=iteration,
        )
        stop_reason = final.stop_reason
        tool_uses = [block for block in final.content if block.type == "tool_use"]
        paused = stop_reason == "pause_turn"
        if (stop_reason == "tool_use" and tool_uses) or paused:
            # Claude's turn as it came, thinking blocks and all: the API checks them.
            conversation.append(
                {
                    "role": "assistant",
                    "content": [b.model_dump(exclude_none=True) for b in final.content],
                }
            )
        if paused:
            continue  # a long turn the API paused: sent back as it is, Claude goes on
        if stop_reason == "tool_use" and tool_uses:
            await sink.show_progress(_progress_for(tool_uses[0].name))
            results = [await tasks.run(tools, b) for b in tool_uses]
            conversation.append({"role": "user", "content": results})
            continue
        await _end(answer, stop_reason, final)
        return LoopResult(answer.text, iteration, stop_reason)

    log.warning("agent.max_iterations", iterations=max_iterations)
    await answer.end_with(stop_reasons.TOO_MANY_STEPS)
    return LoopResult(answer.text, max_iterations, stop_reason)


async def _end(answer: _Answer, stop_reason: str | None, final: Any) -> None:
    """Close the answer as its stop reason requires (what was written always stays)."""
    if not stop_reasons.known(stop_reason):
        # A reason newer than this code: what was written is the answer.
        log.warning("agent.stop_reason.unknown", stop_reason=stop_reason)
    elif stop_reason == "tool_use":
        log.warning("agent.stop_reason.tool_use_without_tool")
    if stop_reason == "refusal":
        details = getattr(final, "stop_details", None)
        log.warning("agent.refusal", category=getattr(details, "category", None))
    elif stop_reason not in stop_reasons.FINISHED:
        log.info("agent.stopped_early", stop_reason=stop_reason)
    note = stop_reasons.note_for(stop_reason, wrote_text=bool(answer.text))
    if note is not None:
        await answer.end_with(note)


async def _stream_one_call(
    client: AsyncAnthropic,
    *,
    model: str,
    system: list[dict[str, Any]],
    messages: list[dict[str, Any]],
    tools: ToolRegistry,
    answer: _Answer,
    thinking: Thinking,
    iteration: int,
) -> Any:
    with tracing.observe(
        "agent.claude",
        as_type="generation",
        model=model,
        input={"system": system, "messages": [_traceable_message(m) for m in messages]},
        model_parameters={"thinking": thinking.mode, "effort": thinking.effort},
    ) as generation:
        request: dict[str, Any] = {
            "model": model,
            "max_tokens": MAX_TOKENS,
            "system": system,
            "messages": with_conversation_breakpoint(messages),
            **thinking.request_params(),
        }
        if tool_params := tools.params():
            request["tools"] = tool_params
        async with client.messages.stream(**request) as stream:
            async for event in stream:
                if event.type == "text":
                    await answer.write(event.text)
                elif event.type == "thinking" and thinking.shows_progress_notes:
                    await answer.write(event.thinking, kept=False)
            final = await stream.get_final_message()
        figures = usage_figures(final.usage)
        generation.update(
            output=[_traceable(block.model_dump(exclude_none=True)) for block in final.content],
            usage_details=figures,
            metadata={"stop_reason": final.stop_reason},
        )
        log.info(
            "agent.claude.call",
            iteration=iteration,
            stop_reason=final.stop_reason,
            **logged_usage(figures),
        )
        return final


def _traceable_message(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, list):
        return {**message, "content": [_traceable(block) for block in content]}
    return message


def _traceable(block: Any) -> Any:
    """A content block as traced: a thinking block's text and signature are not, only
    the text's length."""
    if isinstance(block, dict) and block.get("type") in ("thinking", "redacted_thinking"):
        text = block.get("thinking") or block.get("data") or ""
        return {"type": block["type"], "chars": len(text)}
    return block


def _progress_for(tool_name: str) -> str:
    if tool_name == "memory":
        return "is checking its memory..."
    if tool_name == "recall":
        return "is looking through past conversations..."
    return "is working on it..."
