"""Attack tests play their findings end to end: the same servers and peers as tests/e2e."""

from tests.e2e.conftest import (  # noqa: F401 (fixtures, found by name)
    bucket,
    claude,
    distribution_on_bucket,
    memory_dir,
    orion,
    orion_on_bucket,
    orion_socket,
    slack,
    socket_slack,
)
