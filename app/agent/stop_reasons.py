"""What the person is told when Claude's answer ends other than finished (each `stop_reason`:
docs/claude-settings.md); a reason the SDK does not list yet is logged, the answer left as is."""

from __future__ import annotations

# `max_tokens`: the answer reached the length one reply may have.
CUT_SHORT = (
    "_My answer was cut short here: it reached the length I can write in one reply. "
    "Say “continue” and I'll pick up where I left off._"
)
# `refusal`: Claude's safety classifiers ended the answer. Nothing of the turn is kept.
REFUSED = (
    "_I can't help with this request: Claude's safety checks stopped my answer, "
    "and nothing from this message was saved._"
)
# `model_context_window_exceeded`: the conversation no longer fits what Claude can read.
CONTEXT_FULL = (
    "_I had to stop: this conversation has grown longer than I can read at once. "
    "Start a new conversation and I'll help from there._"
)
# An answer that ends with no text at all (whatever the reason).
NO_ANSWER = "_I couldn't write an answer this time. Please ask again._"
# The loop's step limit ran out with Claude still calling tools.
TOO_MANY_STEPS = (
    "_I had to stop here: this took more steps than I'm allowed in one reply. "
    "Ask me to continue if you need more._"
)

# Reasons after which what was written is the whole answer.
FINISHED = frozenset({"end_turn", "stop_sequence"})

_NOTES = {
    "max_tokens": CUT_SHORT,
    "refusal": REFUSED,
    "model_context_window_exceeded": CONTEXT_FULL,
}


def note_for(stop_reason: str | None, *, wrote_text: bool) -> str | None:
    """The line that ends an answer stopped for `stop_reason`; None when it needs none."""
    if (note := _NOTES.get(stop_reason or "")) is not None:
        return note
    return None if wrote_text else NO_ANSWER


def known(stop_reason: str | None) -> bool:
    """Whether Orion has an outcome for `stop_reason` (every reason the SDK lists)."""
    return stop_reason in (*FINISHED, *_NOTES, "tool_use", "pause_turn")
