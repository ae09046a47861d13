"""`orion chat`: talk to Orion in a terminal, no Slack needed.

The same agent, memory tool, recall and turn-end learning as in Slack, on the local memory
directory by default, as a pretend person (`--user`, default U0TERMINAL) in one pretend
thread. A newcomer with only ANTHROPIC_API_KEY sees what Orion does in a minute:

- the answer streams as Claude writes it; until the first words, a spinner (on a terminal);
- Ctrl-C stops the answer being written and returns to the prompt; Ctrl-C at an empty
  prompt (or twice in a row), or Ctrl-D, ends the conversation — after what it taught
  Orion is saved (Ctrl-C again skips that);
- lines are read with line editing (readline), and pasting more than a terminal's line
  limit (4,095 bytes) arrives whole (app/terminal_chat/line_input.py);
- the farewell says where the memories are only when something was written;
- a key Claude refuses ends the chat with what to fix, and no traceback: the conversation
  owns the terminal, Orion's log lines go to `.orion/chat.log` (app/terminal_chat/console.py).

Modules: `console` (the prompt, Ctrl-C and the farewell), `conversation` (the agent and
what it keeps), `terminal_reply` (the answer as it streams), `line_input`, `background_loop`.
"""

from __future__ import annotations

DEFAULT_USER = "U0TERMINAL"
# What the chat's error messages start with (app/config.py's problem_report).
WHO = "orion chat cannot start"
