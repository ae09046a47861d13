"""Taking the HTTP server's port before anything is imported or built: a port in use stops Orion
at once with one line (app/cli.py), not after a build and a line saying it serves."""

from __future__ import annotations

import errno
import socket

# Where the HTTP server listens: every interface (Cloud Run).
HOST = "0.0.0.0"


class PortUnavailable(Exception):
    """The port cannot be taken (another program listens on it, most often)."""

    def __init__(self, port: int, reason: str) -> None:
        super().__init__(f"{port}: {reason}")
        self.port = port
        self.reason = reason

    @property
    def in_use(self) -> bool:
        return self.reason == IN_USE


IN_USE = "in use"


def take_port(host: str, port: int) -> socket.socket:
    """A socket on `port`, bound but not listening: a connection is refused until a server
    listens on it. Raises `PortUnavailable`."""
    claimed = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    claimed.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
    try:
        claimed.bind((host, port))
    except OSError as exc:
        claimed.close()
        reason = IN_USE if exc.errno == errno.EADDRINUSE else exc.strerror or "refused"
        raise PortUnavailable(port, reason) from exc
    return claimed
