"""Each log line the tests look for (tests/log_events.py) is still written by Orion.

Without this, renaming a line in app/ would leave the tests that wait for it timing out, or
worse, passing because they assert it is absent.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import log_events
from tests.log_events import WRITTEN_AS

APP = Path(__file__).resolve().parent.parent / "app"


@pytest.fixture(scope="module")
def app_source() -> str:
    return "\n".join(path.read_text() for path in sorted(APP.rglob("*.py")))


@pytest.mark.parametrize(("name", "patterns"), sorted(WRITTEN_AS.items()), ids=sorted(WRITTEN_AS))
def test_orion_still_writes_the_log_line(
    app_source: str, name: str, patterns: tuple[str, ...]
) -> None:
    missing = [pattern for pattern in patterns if not re.search(pattern, app_source)]
    assert not missing, (
        f"tests look for the log line {name!r}, but no file in app/ writes it as "
        f"tests/log_events.py expects (not found: {missing}). If it was renamed, "
        "rename it in tests/log_events.py."
    )


def test_every_name_says_how_app_writes_it() -> None:
    """A constant added by hand, without the helpers, would escape the check above."""
    names = {
        value
        for key, value in vars(log_events).items()
        if key.isupper() and not key.startswith("_") and key != "DONE" and isinstance(value, str)
    }
    assert names - set(WRITTEN_AS) == set()
