"""The architecture, kept true: dependencies point one way.

    slack → agent → learning → memory → storage       runtime, observability: below all

and inside app/slack, by room:

    app.py → assistant_view, agent_view, channel_view/, home/, catch_all, oauth/
           → conversation/ → the wiring (event_scope, web_client, mrkdwn, block_kit)

Every module of `app/` is read with `ast` (nothing is imported), and each `app.*` import
it makes is checked against the orders above. A lower layer importing a higher one, a
room of app/slack importing another (but the shared conversation/), or a layer reaching
Slack's SDK below `app/slack`, fails with the offending line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"

# Lowest first. A module may import its own layer and any layer below it. Runtime is the
# process's plumbing (in-flight count, background tasks, stop signals, HTTP intake):
# used by the layers and the entry points, it imports none of them.
LAYERS = ["observability", "runtime", "storage", "memory", "learning", "agent", "slack"]
# Top-level modules that compose the layers (entry points, configuration).
COMPOSITION = {
    "cli",
    "config",
    "services",
    "http_server",
    "socket_mode",
    "shutdown",
    "memory_commands",
    "store_problems",
    "terminal_chat",
}
# Who may use Slack's SDKs: the listeners, and the HTTP intake in runtime, which checks
# Slack's signature before anything parses a request. Never a layer below slack.
SPEAKS_SLACK = {"slack", "runtime"}
# What each layer may import from the composition level: settings only, and the service
# provider for the listeners (Bolt hands them nothing else).
ALLOWED_UPWARD = {
    "observability": {"config"},
    "slack": {"config", "services"},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(APP.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def _area(module: str) -> str | None:
    """The layer or composition piece an `app.*` module belongs to."""
    parts = module.split(".")
    if parts[0] != "app" or len(parts) < 2:
        return None
    return parts[1]


# app/slack's rooms, one concern each. A room may import its own modules, the answering
# core both experiences share (conversation/) and the wiring at the top of app/slack; the
# experiences, home/ and catch_all never import each other. Only app.py, which registers
# every listener, imports them all; nothing imports app.py but the entry points.
SLACK_ROOMS = {
    "assistant_view",
    "agent_view",
    "channel_view",
    "conversation",
    "home",
    "catch_all",
    "oauth",
}
SHARED_ROOM = "conversation"
SLACK_WIRING = {"event_scope", "web_client", "mrkdwn", "block_kit"}
SLACK_APP = "app"


def _slack_place(module: str) -> str | None:
    """The room, wiring module or `app` an `app.slack.*` name is in; None outside app/slack."""
    parts = module.split(".")
    if parts[:2] != ["app", "slack"] or len(parts) < 3:
        return None
    return parts[2]


MODULES = sorted(p for p in APP.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_module_belongs_to_a_known_place() -> None:
    places = set(LAYERS) | COMPOSITION
    strays = [_module_name(p) for p in MODULES if _area(_module_name(p)) not in places | {None}]
    assert not strays, f"modules outside the architecture: {strays}"


def test_every_slack_module_is_in_a_room_or_the_wiring() -> None:
    known = SLACK_ROOMS | SLACK_WIRING | {SLACK_APP, None}
    strays = [_module_name(p) for p in MODULES if _slack_place(_module_name(p)) not in known]
    assert not strays, f"app/slack modules in no room: {strays}"


def _upward_imports(module: str, path: Path) -> list[str]:
    area = _area(module)
    if area not in LAYERS:
        return []  # composition may import every layer
    rank = LAYERS.index(area)
    wrong = []
    for line, imported in _imports(path):
        target = _area(imported)
        if imported.split(".")[0] in ("slack_bolt", "slack_sdk") and area not in SPEAKS_SLACK:
            wrong.append(f"line {line}: {imported} (only app/slack speaks to Slack)")
        if target is None or target == area:
            continue
        if target in LAYERS and LAYERS.index(target) < rank:
            continue
        if target in ALLOWED_UPWARD.get(area, set()):
            continue
        wrong.append(f"line {line}: {imported} ({area} must not depend on {target})")
    return wrong


def _room_crossings(module: str, path: Path) -> list[str]:
    own = _slack_place(module)
    if own is None or own == SLACK_APP:
        return []  # outside app/slack (the layers above check it), or the app that composes it
    wrong = []
    for line, imported in _imports(path):
        target = _slack_place(imported)
        if target is None or target == own or target in SLACK_WIRING:
            continue
        if target == SLACK_APP:
            wrong.append(f"line {line}: {imported} (only the entry points build the app)")
        elif own in SLACK_WIRING:
            wrong.append(f"line {line}: {imported} (the wiring must not depend on {target}/)")
        elif target != SHARED_ROOM:
            wrong.append(f"line {line}: {imported} ({own}/ must not depend on {target}/)")
    return wrong


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _module_name(p))
def test_imports_point_down(path: Path) -> None:
    module = _module_name(path)
    wrong = _upward_imports(module, path) + _room_crossings(module, path)
    assert not wrong, f"{module} imports upwards:\n" + "\n".join(wrong)


def test_the_guard_catches_upward_imports(tmp_path: Path) -> None:
    # The check is only as good as its reading of imports: prove it catches each kind.
    source = tmp_path / "bad.py"
    source.write_text(
        "from app.memory.scopes import MemoryScope\n"  # allowed: memory is below learning
        "from app.slack.conversation.answering import Answerer\n"
        "import app.agent.turn\n"
        "from slack_sdk.web.async_client import AsyncWebClient\n"
        "from app.services import ServiceProvider\n"
    )
    assert _upward_imports("app.learning.bad", source) == [
        "line 2: app.slack.conversation.answering.Answerer (learning must not depend on slack)",
        "line 3: app.agent.turn (learning must not depend on agent)",
        "line 4: slack_sdk.web.async_client.AsyncWebClient (only app/slack speaks to Slack)",
        "line 5: app.services.ServiceProvider (learning must not depend on services)",
    ]
    # The plumbing below every layer: it may speak Slack's protocol, never use a listener.
    assert _upward_imports("app.runtime.bad", source) == [
        "line 1: app.memory.scopes.MemoryScope (runtime must not depend on memory)",
        "line 2: app.slack.conversation.answering.Answerer (runtime must not depend on slack)",
        "line 3: app.agent.turn (runtime must not depend on agent)",
        "line 5: app.services.ServiceProvider (runtime must not depend on services)",
    ]


def test_the_guard_keeps_the_rooms_apart(tmp_path: Path) -> None:
    source = tmp_path / "bad.py"
    source.write_text(
        "from app.slack.conversation.answering import Answerer\n"  # allowed: the shared core
        "from app.slack.event_scope import handling\n"  # allowed: the wiring
        "from app.slack.agent_view.viewing import Viewing\n"
        "from app.slack.home import forget_everything\n"
        "from app.slack.app import build_bolt_app\n"
    )
    assert _room_crossings("app.slack.assistant_view.bad", source) == [
        "line 3: app.slack.agent_view.viewing.Viewing (assistant_view/ must not depend on "
        "agent_view/)",
        "line 4: app.slack.home.forget_everything (assistant_view/ must not depend on home/)",
        "line 5: app.slack.app.build_bolt_app (only the entry points build the app)",
    ]
    assert _room_crossings("app.slack.event_scope", source) == [
        "line 1: app.slack.conversation.answering.Answerer (the wiring must not depend on "
        "conversation/)",
        "line 3: app.slack.agent_view.viewing.Viewing (the wiring must not depend on agent_view/)",
        "line 4: app.slack.home.forget_everything (the wiring must not depend on home/)",
        "line 5: app.slack.app.build_bolt_app (only the entry points build the app)",
    ]
    assert _room_crossings("app.slack.app", source) == []
