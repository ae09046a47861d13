"""The architecture, kept true: dependencies point one way.

    slack → agent → learning → memory → storage → runtime → observability

Every module of `app/` is read with `ast` (nothing is imported), and each `app.*` import
it makes is checked against the order above. A lower layer importing a higher one, or a
layer reaching Slack's SDK below `app/slack`, fails with the offending line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"

# Lowest first. A module may import its own layer and any layer below it.
LAYERS = ["observability", "runtime", "storage", "memory", "learning", "agent", "slack"]
# Top-level modules that compose the layers (entry points, configuration, process tuning).
COMPOSITION = {
    "cli",
    "config",
    "services",
    "http_server",
    "socket_mode",
    "shutdown",
    "readiness",
    "memory_commands",
    "terminal_chat",
}
# Who may use Slack's SDKs: the listeners, and the HTTP intake in runtime, which checks
# Slack's signature and the bot token before Bolt is loaded. Never a layer below slack.
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


MODULES = sorted(p for p in APP.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_module_belongs_to_a_known_place() -> None:
    places = set(LAYERS) | COMPOSITION
    strays = [_module_name(p) for p in MODULES if _area(_module_name(p)) not in places | {None}]
    assert not strays, f"modules outside the architecture: {strays}"


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


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _module_name(p))
def test_imports_point_down(path: Path) -> None:
    module = _module_name(path)
    wrong = _upward_imports(module, path)
    assert not wrong, f"{module} imports upwards:\n" + "\n".join(wrong)


def test_the_guard_catches_upward_imports(tmp_path: Path) -> None:
    # The check is only as good as its reading of imports: prove it catches each kind.
    source = tmp_path / "bad.py"
    source.write_text(
        "from app.memory.scopes import MemoryScope\n"  # allowed: memory is below learning
        "from app.slack.answering import Answerer\n"
        "import app.agent.turn\n"
        "from slack_sdk.web.async_client import AsyncWebClient\n"
        "from app.services import ServiceProvider\n"
    )
    assert _upward_imports("app.learning.bad", source) == [
        "line 2: app.slack.answering.Answerer (learning must not depend on slack)",
        "line 3: app.agent.turn (learning must not depend on agent)",
        "line 4: slack_sdk.web.async_client.AsyncWebClient (only app/slack speaks to Slack)",
        "line 5: app.services.ServiceProvider (learning must not depend on services)",
    ]
