"""Log lines are what Cloud Logging expects, carry the event's context, and hide secrets."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from app.observability.logging import configure_logging, event_context, get_logger, trace_id_for
from app.observability.redaction import register_secrets


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    """These tests reconfigure logging (one to DEBUG): put it back, or every later test
    in this process pays for debug lines (markdown-it's cost 20× a long answer's split)."""
    root = logging.getLogger()
    handlers, level, config = root.handlers[:], root.level, structlog.get_config()
    levels = {name: logging.getLogger(name).level for name in logging.root.manager.loggerDict}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.configure(**config)
    for name, old in levels.items():
        logging.getLogger(name).setLevel(old)


def _lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_json_lines_carry_cloud_logging_fields_and_event_context() -> None:
    stream = io.StringIO()
    configure_logging(level="INFO", fmt="json", project="orion-prod", stream=stream)
    with event_context(event_id="Ev123", user="U1", channel="D1", thread_ts="1.2"):
        get_logger("test").info("slack.user_message.start", extra_field=3)
        logging.getLogger("slack_bolt").warning("from the standard library")
    first, second = _lines(stream)
    trace_id = trace_id_for("Ev123")
    assert first["severity"] == "INFO"
    assert first["message"] == "slack.user_message.start"
    assert first["time"].endswith("Z")
    assert first["logging.googleapis.com/trace"] == f"projects/orion-prod/traces/{trace_id}"
    assert (first["user"], first["channel"], first["thread_ts"]) == ("U1", "D1", "1.2")
    assert first["extra_field"] == 3
    assert second["severity"] == "WARNING"
    assert second["trace_id"] == trace_id


def test_secrets_never_reach_a_log_line() -> None:
    stream = io.StringIO()
    register_secrets(["xoxb-super-secret-token"])
    try:
        configure_logging(level="INFO", fmt="json", stream=stream)
        get_logger("test").error("failed", detail="bad token xoxb-super-secret-token here")
        logging.getLogger("slack_sdk").error("Authorization: Bearer xoxb-super-secret-token")
    finally:
        register_secrets([])
    output = stream.getvalue()
    assert "xoxb-super-secret-token" not in output
    assert output.count("[REDACTED]") == 2


def test_console_format_is_human_readable() -> None:
    stream = io.StringIO()
    configure_logging(level="INFO", fmt="console", stream=stream)
    get_logger("test").info("hello.world", n=1)
    text = stream.getvalue()
    assert "hello.world" in text and not text.lstrip().startswith("{")


def test_a_new_configuration_takes_effect_for_loggers_already_in_use() -> None:
    log = get_logger("test.reconfigured")
    first, second = io.StringIO(), io.StringIO()
    configure_logging(level="INFO", fmt="json", stream=first)
    log.info("to.the.first")
    configure_logging(level="WARNING", fmt="json", stream=second)
    log.info("dropped")
    log.warning("to.the.second")
    assert [line["message"] for line in _lines(first)] == ["to.the.first"]
    assert [line["message"] for line in _lines(second)] == ["to.the.second"]
    assert _lines(second)[0]["logger"] == "test.reconfigured"


def test_slack_sdk_skips_building_debug_lines_below_debug() -> None:
    # slack_sdk formats its request/response debug lines whenever its logger's own level
    # is unset (0), whatever the effective level.
    configure_logging(level="INFO", fmt="json", stream=io.StringIO())
    assert logging.getLogger("slack_sdk.web.async_base_client").level == logging.INFO
    configure_logging(level="DEBUG", fmt="json", stream=io.StringIO())
    assert logging.getLogger("slack_sdk.web.async_base_client").level == logging.DEBUG


def _read_the_profile() -> None:
    raise TimeoutError("no time left in the storage deadline")


def _open_the_turn() -> None:
    try:
        _read_the_profile()
    except TimeoutError as exc:
        raise RuntimeError("the turn's memory could not be read") from exc


def _recurse(depth: int) -> None:
    if depth == 0:
        raise ValueError("deep")
    _recurse(depth - 1)


def test_a_survived_exception_is_logged_with_its_traceback_and_causes() -> None:
    """Every frame by file, line and function, the causes first as Python prints them; no
    source lines (the repository has them: finding and parsing them cost CPU when many
    budgets end at once)."""
    stream = io.StringIO()
    configure_logging(level="INFO", fmt="json", stream=stream)
    log = get_logger("test")
    try:
        _open_the_turn()
    except RuntimeError as exc:
        log.warning("memory.lookup_failed", error=type(exc).__name__, exc_info=exc)
    try:
        _recurse(50)
    except ValueError:
        logging.getLogger("slack_bolt").exception("a library's failure")
    try:
        raise ExceptionGroup("two failed", [KeyError("a"), ValueError("b")])
    except ExceptionGroup as group:
        log.error("both.failed", exc_info=group)
    chained, deep, grouped = _lines(stream)

    text = chained["exception"]
    assert text.startswith("Traceback (most recent call last):\n")
    assert f'File "{__file__}", line ' in text and ", in _read_the_profile\n" in text
    assert text.index("TimeoutError: no time left") < text.index("direct cause")
    assert text.endswith("RuntimeError: the turn's memory could not be read")
    assert "raise TimeoutError(" not in text and "^^^" not in text
    # The repeated call three times, then the raise: not fifty frames.
    assert deep["exception"].count(", in _recurse\n") == 4
    assert "[the line above repeated]" in deep["exception"]
    assert deep["exception"].endswith("ValueError: deep")
    assert "KeyError: 'a'" in grouped["exception"] and "ValueError: b" in grouped["exception"]
