"""`orion chat`: talk to Orion in a terminal, no Slack needed — the same agent, memory tool,
recall and turn-end learning as in Slack, on the local memory directory, as a pretend
person (`--user`, default U0TERMINAL) in one pretend thread (README.md, "Try it").

Modules: `console` (the prompt, Ctrl-C, the farewell, the answer as it streams and the
loop it runs on), `conversation` (the agent and what it keeps), `line_input`."""

from __future__ import annotations

DEFAULT_USER = "U0TERMINAL"
# What the chat's error messages start with (app/config.py's problem_report).
WHO = "orion chat cannot start"
