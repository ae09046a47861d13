"""Every package Orion imports is one it declares.

A module that imports a package only present because another dependency pulls it in
(httpx2 through anthropic, dotenv through pydantic-settings) breaks the day that dependency
drops or renames it. So every `import` in the code is read with `ast` (nothing is imported),
its top-level name is mapped to the distribution installed for it, and that distribution
must be named in pyproject.toml: app/ against the runtime dependencies (what `orion` installs),
tests/ and bench/ against those plus the dev group.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import importlib.util
import re
import sys
import tomllib
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The repository's own top-level packages: imported, never installed from an index.
FIRST_PARTY = {"app", "tests", "bench"}


def _normalized(distribution: str) -> str:
    """The name as an index compares it (PEP 503): case and -_. runs do not matter."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _requirement_name(requirement: str) -> str:
    # The name is everything before the first extra, version, marker or URL character.
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert match, f"unreadable requirement in pyproject.toml: {requirement!r}"
    return _normalized(match.group(1))


@cache
def _declared() -> tuple[frozenset[str], frozenset[str]]:
    """(runtime dependencies, dev dependencies), as normalized names."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    runtime = frozenset(_requirement_name(r) for r in project["project"]["dependencies"])
    dev = frozenset(_group(project["dependency-groups"], "dev"))
    return runtime, dev


def _group(groups: dict[str, list[str | dict[str, str]]], name: str) -> Iterator[str]:
    """A dependency group's requirement names, with the groups it includes (PEP 735)."""
    for item in groups[name]:
        if isinstance(item, dict):
            yield from _group(groups, item["include-group"])
        else:
            yield _requirement_name(item)


def _imported_modules(path: Path) -> set[str]:
    """Absolute module names imported by a file (relative imports are first-party)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def _file_owner(module: str, candidates: list[str]) -> set[str]:
    """Which of several distributions sharing a namespace (google.*) ships `module`."""
    name = module
    while name:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec and spec.has_location else None
        if origin:
            for distribution in candidates:
                files = importlib.metadata.distribution(distribution).files or []
                if any(Path(str(f.locate())).resolve() == Path(origin).resolve() for f in files):
                    return {distribution}
        name = name.rpartition(".")[0]
    return set(candidates)


@functools.cache
def _packages_distributions() -> Mapping[str, list[str]]:
    """Which distributions provide each top-level module: reading every installed
    distribution's metadata takes about half a second, once."""
    return importlib.metadata.packages_distributions()


def _distributions(module: str) -> set[str]:
    """The installed distributions that may provide `module` (empty: none installed)."""
    candidates = _packages_distributions().get(module.split(".")[0], [])
    if len(candidates) > 1:
        return {_normalized(d) for d in _file_owner(module, candidates)}
    return {_normalized(d) for d in candidates}


def _undeclared(directory: Path, allowed: frozenset[str]) -> list[str]:
    problems: list[str] = []
    for path in sorted(directory.rglob("*.py")):
        for module in sorted(_imported_modules(path)):
            top = module.split(".")[0]
            if top in FIRST_PARTY or top in sys.stdlib_module_names:
                continue
            distributions = _distributions(module)
            if not distributions & allowed:
                where = path.relative_to(directory.parent)
                provided = ", ".join(sorted(distributions)) or "no installed distribution"
                problems.append(f"{where}: imports {module} ({provided}), not declared")
    return problems


def test_app_imports_only_runtime_dependencies() -> None:
    runtime, _dev = _declared()
    problems = _undeclared(ROOT / "app", runtime)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("directory", ["tests", "bench"])
def test_tests_and_bench_import_only_declared_dependencies(directory: str) -> None:
    runtime, dev = _declared()
    problems = _undeclared(ROOT / directory, runtime | dev)
    assert not problems, "\n".join(problems)


def test_an_import_reaching_a_transitive_dependency_is_reported(tmp_path: Path) -> None:
    """jiter is installed only because anthropic needs it: importing it directly fails,
    with the file and the distribution named; a declared and a first-party import pass."""
    runtime, _dev = _declared()
    package = tmp_path / "app"
    package.mkdir()
    (package / "parsing.py").write_text(
        "import json\n"
        "import anthropic\n"
        "from app.config import Settings\n"
        "from jiter import from_json\n"
    )
    assert _undeclared(package, runtime) == ["app/parsing.py: imports jiter (jiter), not declared"]
