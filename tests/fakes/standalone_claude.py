"""A stand-in Claude for trying `orion chat` without an API key (the README's "Try it").

    scripts/uv run python -m tests.fakes.standalone_claude      # http://127.0.0.1:8765

FakeClaude (tests/fakes/anthropic_api.py) on a port of its own until Ctrl-C. No model is
behind it and it says so: it answers each message with what Orion sent it, the person's
words and what Orion remembered about them (the fenced memory block of the system prompt,
app/agent/prompts.py), so a memory saved in one conversation shows up in the next. The
end-of-turn summary gets a plain one, without the welcome-back lines a model would write,
so the next greeting is made from the person's preferences, as Slack's is.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import signal
import threading
from typing import Any

from app.agent.prompts import MEMORY_CLOSE_TAG, MEMORY_OPEN_TAG
from app.agent.summarizer import SUMMARY_INSTRUCTIONS
from tests.fakes.anthropic_api import FakeClaude, last_user_text
from tests.fakes.claude_script import ScriptItem, text

DEFAULT_PORT = 8765
WHO = (
    "(A stand-in for Claude, tests/fakes/standalone_claude.py: no model here, only what "
    "Orion sent.)"
)
NOTHING_REMEMBERED = "Orion sent nothing it remembered about you."


def answer(body: dict[str, Any]) -> ScriptItem:
    """What the stand-in says to one Messages API request."""
    if body.get("system") == SUMMARY_INSTRUCTIONS:
        return text("# A conversation with the stand-in Claude\nNo model summarised it.")
    remembered = _remembered(body.get("system"))
    shown = (
        f"What Orion remembered and sent along:\n{remembered}" if remembered else NOTHING_REMEMBERED
    )
    return text(f"{WHO}\nYou said: “{last_user_text(body)}”\n{shown}")


def _remembered(system: object) -> str | None:
    """The memory block of Orion's system prompt, as Orion stored it (unescaped)."""
    blocks = system if isinstance(system, list) else []
    for block in blocks:
        words = block.get("text", "") if isinstance(block, dict) else ""
        start, end = words.find(MEMORY_OPEN_TAG), words.find(MEMORY_CLOSE_TAG)
        if 0 <= start < end:
            return html.unescape(words[start + len(MEMORY_OPEN_TAG) : end]).strip()
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="default: %(default)s")
    port = parser.parse_args().port
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    claude = FakeClaude(port)
    try:
        claude.start()
    except OSError:  # the port taken: most often a stand-in already running
        raise SystemExit(
            f"Port {port} is in use: a stand-in Claude already running? "
            "Stop it (kill %1), or pass --port and set ANTHROPIC_BASE_URL to match."
        ) from None
    try:
        claude.responder = answer
        print(f"Stand-in Claude at {claude.url}: set ANTHROPIC_BASE_URL={claude.url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: the end
            stopped.wait()
    finally:
        claude.stop()


if __name__ == "__main__":
    main()
