"""Commands forked from the warm Python (tests/warm_python.py) only in tests: a benchmark
measures Orion as deployed, started in a new interpreter."""

from __future__ import annotations

import os

import pytest

from tests.warm_python import REPO, WarmPython


def test_only_a_test_forks_orion_from_the_warm_python(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(REPO)}
    assert WarmPython.serves(env)
    monkeypatch.delenv("PYTEST_CURRENT_TEST")  # as in `python -m bench.…`
    assert not WarmPython.serves(env)
