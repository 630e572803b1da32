"""The listening socket every orcmem server uses (the Memory page, MCP over HTTP): 127.0.0.1 only."""

from __future__ import annotations

import socket
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from orcmem.models.errors import OrcmemError

HOST = "127.0.0.1"  # never another interface: the servers hand out private memories
LOOPBACK_NAMES = (HOST, "localhost")  # what a Host header may name
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


class OwnOrigin:
    """The browser-facing check both servers make: a request names this server in its one Host header, and its
    Origin, if any (at most one), is this server's own. A web page the person visits can make the browser send
    requests to 127.0.0.1; its Origin (or, through DNS rebinding, its Host) gives it away."""

    def __init__(self, port: int | None, names: Iterable[str] = LOOPBACK_NAMES) -> None:
        """Accept `names` on `port` (None: any port, for tests)."""
        self.port = port
        self.names = tuple(names)

    def host_allowed(self, value: str | None) -> bool:
        """Whether a Host header names this server."""
        split = _split_host(value or "")
        if split is None:
            return False
        host, port = split
        return host in self.names and (self.port is None or port == self.port)

    def origin_allowed(self, value: str) -> bool:
        """Whether an Origin header is this server's own (an `http://` loopback origin on its port)."""
        parts = urlsplit(value)
        if parts.scheme != "http" or parts.path not in ("", "/"):
            return False
        return self.host_allowed(parts.netloc)

    def hosts_allowed(self, hosts: Sequence[str]) -> bool:
        """Exactly one Host header, naming this server (with two, the check and the app could read different ones)."""
        return len(hosts) == 1 and self.host_allowed(hosts[0])

    def origins_allowed(self, origins: Sequence[str]) -> bool:
        """At most one Origin header, this server's own."""
        return len(origins) <= 1 and all(self.origin_allowed(origin) for origin in origins)


def _split_host(value: str) -> tuple[str, int | None] | None:
    """(`host`, port or None) from a Host header; None when it cannot be read."""
    parts = urlsplit("//" + value)
    try:
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname or parts.username is not None or parts.path or parts.query:
        return None
    return parts.hostname.lower(), port
