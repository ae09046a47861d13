"""The Pythons Orion runs on, said the same way everywhere that says it.

pyproject.toml's requires-python is what uv holds a machine's Python to; .ci/run decides
from the same range whether CI may build on the system Python, and the README tells a
newcomer whether their Python will do. Debian 12's 3.11.2 must be in it: on a machine whose
only Python is that one, uv must not try to download another.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _range() -> tuple[tuple[int, int], tuple[int, int]]:
    """(lowest minor, first minor excluded) of requires-python, written `>=3.X,<3.Y`."""
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    found = re.fullmatch(r">=3\.(\d+),<3\.(\d+)", spec.replace(" ", ""))
    assert found, f"requires-python {spec!r}: expected >=3.X,<3.Y (no patch release)"
    return (3, int(found[1])), (3, int(found[2]))


def test_debian_12s_python_is_in_range() -> None:
    lowest, excluded = _range()
    assert lowest <= (3, 11) < excluded


def test_ci_and_the_readme_say_the_same_range() -> None:
    (_, low), (_, excluded) = _range()
    ci = (ROOT / ".ci" / "run").read_text()
    assert f"(3, {low}) <= sys.version_info[:2] < (3, {excluded})" in ci
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert f"any Python from 3.{low} through 3.{excluded - 1}" in readme
