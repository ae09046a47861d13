"""The configuration Orion pins (docs/interface.md), held from the operator's side: every variable
Orion reads is documented in `.env.example` and in the README's configuration table, each
default the README states is the one Orion uses, and the defaults the interface pins stay
Orion's."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from app.config import Settings, read_settings
from tests.orion_process import REPO

# Read by a library rather than by Orion's settings (docs/interface.md), documented all the same.
READ_BY_LIBRARIES = ("STORAGE_EMULATOR_HOST",)

# Pinned: a deploy script or a test may rely on each (variable, its value when unset).
PINNED_DEFAULTS = [
    ("SLACK_API_URL", "https://slack.com/api/"),
    ("SLACK_AUTHORIZE_URL", "https://slack.com/oauth/v2/authorize"),
    ("MEMORY_DIR", ".orion/memories"),
    ("MEMORY_LOAD_TIMEOUT_S", "2.0"),
    ("MEMORY_SESSION_RETENTION_DAYS", "30"),
    ("PORT", "8080"),
    # "if configured rather than detected": existing installs keep assistant_view.
    ("SLACK_EXPERIENCE", "assistant"),
]


def _variables() -> list[str]:
    return [name.upper() for name in Settings.model_fields] + list(READ_BY_LIBRARIES)


def _settings(monkeypatch: pytest.MonkeyPatch, **given: str) -> Settings:
    """Settings from `given` alone (plus the one required key): nothing of the test's own
    environment or a .env takes part."""
    for name in _variables():
        monkeypatch.delenv(name, raising=False)
    values: dict[str, Any] = {"anthropic_api_key": "sk-ant-k", **given}
    return read_settings(Settings, _env_file=None, **values)


def _readme_rows() -> list[tuple[list[str], str]]:
    """The README's configuration table: each row's variables and its default cell."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("`"):
            rows.append((re.findall(r"`([A-Z][A-Z0-9_]+)`", cells[0]), cells[1]))
    return rows


def _readme_table() -> dict[str, str]:
    """The README's configuration table: each variable with its default cell."""
    return {name: default for names, default in _readme_rows() for name in names}


def _env_example_names() -> set[str]:
    text = (REPO / ".env.example").read_text()
    return set(re.findall(r"^(?:# )?([A-Z][A-Z0-9_]+)=", text, flags=re.MULTILINE))


@pytest.mark.parametrize("name", _variables())
def test_every_variable_orion_reads_is_documented_in_env_example_and_the_readme(
    name: str,
) -> None:
    assert name in _env_example_names(), f"{name} is not in .env.example"
    assert name in _readme_table(), f"{name} is not in the README's configuration table"


def test_every_variable_the_docs_list_is_one_orion_reads() -> None:
    """A documented variable Orion ignores would be set by an operator to no effect."""
    sdk_read = {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"}  # both read by Orion too
    known = set(_variables()) | sdk_read
    assert set(_readme_table()) - known == set()
    assert _env_example_names() - known == set()


def _readme_defaults() -> list[tuple[str, str]]:
    """(variable, default) for each README row whose default cell gives one backticked
    value per variable, in order."""
    pairs = []
    for names, default_cell in _readme_rows():
        values = re.findall(r"`([^`]+)`", default_cell)
        if len(values) == len(names):
            pairs += list(zip(names, values, strict=True))
    return pairs


@pytest.mark.parametrize(("name", "default"), _readme_defaults())
def test_setting_a_variable_to_the_readmes_default_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, name: str, default: str
) -> None:
    field = name.lower()
    unset = getattr(_settings(monkeypatch), field)
    assert getattr(_settings(monkeypatch, **{field: default}), field) == unset


@pytest.mark.parametrize(("name", "default"), PINNED_DEFAULTS)
def test_each_default_design_pins_is_orions(
    monkeypatch: pytest.MonkeyPatch, name: str, default: str
) -> None:
    field = name.lower()
    unset = getattr(_settings(monkeypatch), field)
    assert getattr(_settings(monkeypatch, **{field: default}), field) == unset
    if name == "MEMORY_DIR":
        assert Path(unset) == Path(default)
    else:
        assert str(getattr(unset, "value", unset)) == default
