"""`orion chat`: talk to Orion in a terminal, no Slack needed, as a pretend person in one pretend
thread (README.md, "Try it"). Modules: `console` (the prompt, Ctrl-C, the farewell, the streamed
answer and its loop), `conversation` (the agent and what it keeps), `line_input`."""

from __future__ import annotations

DEFAULT_USER = "U0TERMINAL"
# What the chat's error messages start with (app/config.py's problem_report).
WHO = "orion chat cannot start"
