"""The attacker's suite plays each finding through the real protocol peers: the same
fixtures as the end-to-end tests (tests/e2e/conftest.py)."""

from tests.e2e.conftest import (  # noqa: F401
    bucket,
    claude,
    memory_dir,
    orion,
    orion_on_bucket,
    slack,
)
