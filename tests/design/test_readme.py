"""The README shows every command the interface pins (docs/interface.md, "Commands"), as a
newcomer types them from the clone: install, run (auto, HTTP, Socket Mode), the terminal chat,
and the test suite."""

from __future__ import annotations

import re

import pytest

from tests.orion_process import REPO

PINNED = [
    "sync",
    "run orion",
    "run orion serve",
    "run orion socket",
    "run orion chat",
    "run pytest",
]


def _readme_commands() -> set[str]:
    """Every `scripts/uv …` command in the README's code blocks, without uv's own options."""
    readme = (REPO / "README.md").read_text()
    found = set()
    for block in re.findall(r"^```(?:bash|sh)?\n(.*?)^```", readme, re.MULTILINE | re.DOTALL):
        for line in block.splitlines():
            words = line.split("#", 1)[0].split()
            if words[:1] == ["scripts/uv"]:
                found.add(" ".join(w for w in words[1:] if not w.startswith("-")))
    return found


@pytest.mark.parametrize("command", PINNED)
def test_the_readme_shows_each_pinned_command(command: str) -> None:
    assert command in _readme_commands(), f"`scripts/uv {command}` is not in a README code block"
