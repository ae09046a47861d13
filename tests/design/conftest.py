"""The end-to-end fixtures (Orion over HTTP against the fake Slack, Claude and the GCS
emulator), shared with tests/e2e/: this folder holds Orion to its pinned interface
(docs/interface.md) from outside."""

from tests.e2e.conftest import (  # noqa: F401  (fixtures)
    bucket,
    claude,
    memory_dir,
    orion,
    orion_on_bucket,
    slack,
)
