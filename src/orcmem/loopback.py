"""The listening socket every orcmem server uses (the Memory page, MCP over HTTP): 127.0.0.1 only."""

from __future__ import annotations

import socket

from orcmem.errors import OrcmemError

HOST = "127.0.0.1"  # never another interface: the servers hand out private memories
LISTEN_BACKLOG = 2048  # uvicorn's default backlog


def bind_loopback(port: int = 0) -> socket.socket:
    """A TCP socket bound to 127.0.0.1 on `port` (0: a free port the system picks), already listening.

    It listens before the server prints its address, so a browser or client that opens the address at once is
    queued until the server accepts, never refused.

    Raises:
        OrcmemError: the port is taken or cannot be used.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        # A fixed --port can be used again at once after a restart (not while another server listens on it).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(LISTEN_BACKLOG)
    except OSError as exc:
        sock.close()
        raise OrcmemError(
            f"Cannot listen on {HOST}:{port} ({exc.strerror or exc}). Choose another --port, or leave it out "
            "to use a free one."
        ) from None
    sock.set_inheritable(False)
    return sock
