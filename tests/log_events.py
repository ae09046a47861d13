"""Every Orion log line the tests look for, named once.

Tests find Orion's JSON log lines by their message, the event name
(`orion.wait_logged(log_events.MEMORY_FORGET)`). Each name here records how app/ writes it,
and tests/test_log_events.py checks that app/ still does: renaming a log line in app/ fails
that one test, naming the line, and this file is the one place to follow the rename.

A constant is the event name in capitals, dots as underscores (`memory.forget` →
`MEMORY_FORGET`), so a reader can find the line in app/ from the constant.
"""

from __future__ import annotations

import re

# name → patterns that must all be found in app/'s source for Orion to still write `name`.
WRITTEN_AS: dict[str, tuple[str, ...]] = {}

# A logging call with its message first: `log.info("…"`, or through an alias that picks the
# level (`emit = log.debug if … else log.info; emit("…"`), the message maybe on its own line.
_LOG_CALL = r"\b(?:log\.(?:debug|info|warning|error|exception|critical)|emit)\(\s*"


def _line(name: str) -> str:
    """A line app/ logs by its name: `log.info("memory.forget", …)`."""
    return _written_as(name, _LOG_CALL + re.escape(f'"{name}"'))


def _written_as(name: str, *patterns: str) -> str:
    WRITTEN_AS[name] = patterns
    return name


# --- a listener's end ---------------------------------------------------------------------

# Each delivery a listener handles ends in one INFO line, `<listener>.done`, its listener named
# in `handling("slack.…", …)` (app/slack/event_scope.py).
DONE = ".done"
_DONE_LOGGED = _LOG_CALL + re.escape('f"{name}.done"')
WRITTEN_AS["<listener>" + DONE] = (_DONE_LOGGED,)


def _handled_by(listener: str) -> str:
    return r"\bhandling\(\s*" + re.escape(f'"{listener}"')


def _listener(listener: str) -> str:
    """A listener's name, which starts each of its lines."""
    return _written_as(listener, _handled_by(listener))


def _done(listener: str) -> str:
    return _written_as(listener + DONE, _DONE_LOGGED, _handled_by(listener))


SLACK_AGENT_MESSAGE_DONE = _done("slack.agent_message")
SLACK_AGENT_SESSION_STOPPED_DONE = _done("slack.agent_session_stopped")
SLACK_FEEDBACK_DONE = _done("slack.feedback")
SLACK_FEEDBACK_NOT_THEIRS = _line("slack.feedback.not_theirs")
SLACK_MEMORY_UNDO_DONE = _done("slack.memory_undo")
SLACK_MESSAGES_TAB_OPENED_DONE = _done("slack.messages_tab_opened")
SLACK_THREAD_STARTED_DONE = _done("slack.thread_started")
SLACK_USER_MESSAGE = _listener("slack.user_message")
SLACK_USER_MESSAGE_DONE = _done(SLACK_USER_MESSAGE)


# --- the memory tool's commands (app/memory/tool/scoped_tool.py: `tool.memory.<command>`) ---


def _memory_command(command: str) -> str:
    return _written_as(
        f"tool.memory.{command}",
        _LOG_CALL + "name,",
        re.escape('name = f"tool.memory.{command}"'),
        re.escape(f'"{command}": '),  # a command the tool parses (app/memory/tool/scoped_tool.py)
    )


TOOL_MEMORY_CREATE = _memory_command("create")
TOOL_MEMORY_STR_REPLACE = _memory_command("str_replace")
TOOL_MEMORY_VIEW = _memory_command("view")


# --- lines logged by name -------------------------------------------------------------------

CHAT_CLAUDE_REFUSED = _line("chat.claude_refused")
MEMORY_AFTER_TURN = _line("memory.after_turn")
MEMORY_AFTER_TURN_FAILED = _line("memory.after_turn.failed")
# A turn whose answer Claude refused: what it changed in memory was put back.
MEMORY_REFUSED_TURN_REVERTED = _line("memory.refused_turn.reverted")
MEMORY_BEFORE_TURN = _line("memory.before_turn")
MEMORY_ERASED_DURING_EVENT = _line("memory.erased_during_event")
MEMORY_EXPORT = _line("memory.export")
MEMORY_FILE_UNREADABLE = _line("memory.file.unreadable")
MEMORY_FORGET = _line("memory.forget")
MEMORY_FORGET_FAILED = _line("memory.forget.failed")
MEMORY_ERASURE_TOO_LARGE = _line("memory.erasure.too_large")
MEMORY_NOTE = _line("memory.note")
MEMORY_NOTE_UNDO_FAILED = _line("memory.note.undo_failed")
MEMORY_RECORD_UNREADABLE = _line("memory.record.unreadable")
MEMORY_PREFERENCES_WRITE = _line("memory.preferences.write")
MEMORY_INVENTORY_TOO_LARGE = _line("memory.inventory.too_large")
MEMORY_PREFERENCES_WRITE_FAILED = _line("memory.preferences.write.failed")
MEMORY_RETENTION_SWEEP = _line("memory.retention.sweep")
MEMORY_WITHOUT_MEMORY = _line("memory.without_memory")
MEMORY_SHOW = _line("memory.show")
MEMORY_SHOW_FAILED = _line("memory.show.failed")
MEMORY_SUMMARY_MODEL_FAILED = _line("memory.summary.model_failed")
MEMORY_UNDO = _line("memory.undo")
MEMORY_UNDO_FAILED = _line("memory.undo.failed")
MEMORY_UNDO_REFUSED = _line("memory.undo.refused")
ORION_SERVING = _line("orion.serving")
ORION_SOCKET_MODE_CONNECTED = _line("orion.socket_mode.connected")
ORION_SHUTDOWN = _line("orion.shutdown")
ORION_SOCKET_MODE_CONNECTING = _line("orion.socket_mode.connecting")
ORION_STOPPING = _line("orion.stopping")
# Written straight to stderr's file descriptor as one JSON object, not through the logger:
# a signal handler may not take the logger's lock (app/runtime/stop_signals.py).
ORION_STOPPED_AT_ONCE = _written_as(
    "orion.stopped_at_once", r'"message":\s*"orion\.stopped_at_once"'
)
SLACK_AGENT_SESSION_STOPPED_TURN = _line("slack.agent_session_stopped.turn")
SLACK_AGENT_SESSION_STOPPED_NOT_THEIRS = _line("slack.agent_session_stopped.not_theirs")
SLACK_ASK_AGAIN_ALREADY_ASKED = _line("slack.ask_again.already_asked")
SLACK_ASK_AGAIN_DONE = _done("slack.ask_again")
SLACK_ASK_AGAIN_MALFORMED = _line("slack.ask_again.malformed")
SLACK_ASK_AGAIN_REFUSED = _line("slack.ask_again.refused")
SLACK_BACKGROUND_CUT_OFF = _line("slack.background.cut_off")
SLACK_BACKGROUND_FAILED = _line("slack.background.failed")
SLACK_EVENT_CLAIM_UNAVAILABLE = _line("slack.event.claim_unavailable")
SLACK_EVENT_DUPLICATE = _line("slack.event.duplicate")
SLACK_EXPERIENCE_MISMATCH = _line("slack.experience_mismatch")
SLACK_MESSAGE_IGNORED = _line("slack.message.ignored")
SLACK_OTHER_TEAM_IGNORED = _line("slack.other_team.ignored")
SLACK_REQUEST_MALFORMED = _line("slack.request.malformed")
SLACK_REQUEST_TOO_LARGE = _line("slack.request.too_large")
SLACK_STREAM_FAILED = _line("slack.stream_failed")
SLACK_STREAM_STOPPED = _line("slack.stream_stopped")
SLACK_CONVERSATION_ERASED_SINCE_START = _line("slack.conversation.erased_since_start")
SLACK_CONVERSATION_RECORD_FAILED = _line("slack.conversation.record_failed")
SLACK_CONVERSATION_NOT_OWNER = _line("slack.conversation.not_owner")
SLACK_CONVERSATION_UNCHECKED = _line("slack.conversation.unchecked")
SLACK_THREAD_HISTORY_LIMITED = _line("slack.thread_history.limited")
SLACK_THREAD_HISTORY_FAILED = _line("slack.thread_history.failed")
MEMORY_TRANSCRIPT_WRITE_FAILED = _line("memory.transcript.write_failed")
SLACK_THREAD_STARTED_FAILED = _line("slack.thread_started.failed")
SLACK_CLAUDE_REFUSED = _line("slack.claude_refused")
SLACK_TURN_CUT_OFF = _line("slack.turn.cut_off")
SLACK_TURN_STOPPED = _line("slack.turn.stopped")
SLACK_USER_MESSAGE_FAILED = _line("slack.user_message.failed")
STORAGE_CHECK_FAILED = _line("storage.check_failed")
STORE_RECOVERED = _line("store.recovered")
STORE_UNAVAILABLE = _line("store.unavailable")
TOOL_MEMORY_LOAD_FAILED = _line("tool.memory.load.failed")
TOOL_MEMORY_LOAD_SCOPE_FAILED = _line("tool.memory.load.scope_failed")
TOOL_MEMORY_LOAD_SUCCESS = _line("tool.memory.load.success")
TOOL_MEMORY_LOAD_TIMEOUT = _line("tool.memory.load.timeout")
TOOL_RECALL_READ_FAILED = _line("tool.recall.read_failed")
# A tool call that raised something other than a model-visible error (logged with its
# traceback: app/agent/tool_registry.py).
TOOL_FAILED = _line("tool.failed")
# A person's and a workspace's traces are deleted alike (`_forget(event, …)`): each logs
# `event` when done, `event.failed` when Langfuse could not be asked, and
# `event.not_theirs_kept` for observations listed that were not the erasure's.
_FORGET_CALL = r'_forget\(\s*"{}"'


def _forget(name: str, outcome: str) -> str:
    logged = re.escape("event, traces=") if not outcome else re.escape(f'f"{{event}}{outcome}"')
    return _written_as(name + outcome, _FORGET_CALL.format(re.escape(name)), _LOG_CALL + logged)


TRACING_FORGET = _forget("tracing.forget", "")
TRACING_FORGET_FAILED = _forget("tracing.forget", ".failed")
TRACING_FORGET_TEAM = _forget("tracing.forget_team", "")
TRACING_FORGET_TEAM_FAILED = _forget("tracing.forget_team", ".failed")
TRACING_FORGET_TEAM_NOT_THEIRS_KEPT = _forget("tracing.forget_team", ".not_theirs_kept")

# --- channels -------------------------------------------------------------------------------

AUDIT_MEMORY = _line("audit.memory")
SLACK_APP_MENTION_DONE = _done("slack.app_mention")
SLACK_CHANNEL_NOT_ANSWERED = _line("slack.channel.not_answered")
