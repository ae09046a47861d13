"""How much Claude thinks in each model call (docs/claude-settings.md says which and why); no SDK
import, as the configuration reads the defaults from here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

ThinkingMode = Literal["between_tools", "adaptive", "disabled"]
Effort = Literal["low", "medium", "high", "xhigh", "max"]
# With thinking off (`between_tools`, `disabled`) the API takes only these efforts.
THINKING_OFF_EFFORTS: tuple[Effort, ...] = ("low", "medium", "high")


@dataclass(frozen=True)
class Thinking:
    mode: ThinkingMode
    effort: Effort

    def request_params(self) -> dict[str, Any]:
        """The Messages API parameters for this setting."""
        thinking: dict[str, Any] = {"type": self.mode}
        if self.mode == "adaptive":
            # Reasoning is never shown, logged or stored: ask for none of its text.
            thinking["display"] = "omitted"
        return {"thinking": thinking, "output_config": {"effort": self.effort}}

    @property
    def shows_progress_notes(self) -> bool:
        """Whether the thinking blocks of a call are Claude's progress notes between tool
        calls (its text for the person), rather than reasoning."""
        return self.mode == "between_tools"


# Answers: no up-front thinking (first words soon), progress notes shown between tool
# calls; `medium` keeps Claude checking its memory and past conversations when that helps
# (at `low` it more often skips a look-up), below Sonnet 5.5's `high` default.
ANSWER_THINKING = Thinking("between_tools", "medium")
# Summaries: a short rewrite, after the reply, that must always produce text.
SUMMARY_THINKING = Thinking("disabled", "low")
