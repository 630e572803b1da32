"""Keep a peer offline: refuse, and count, every attempt to reach a host that is not this machine.

Standalone on purpose (standard library only): the basic-memory helper imports it from its own Python 3.12 venv.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager

_LOOPBACK = {"127.0.0.1", "localhost", "::1", "0.0.0.0", "", None}

# Library switches that stop telemetry and hub downloads before they are tried (the guard catches the rest).
OFFLINE_ENV = {
    "MEM0_TELEMETRY": "False",
    "HF_HUB_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "DO_NOT_TRACK": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "LOGFIRE_IGNORE_NO_CONFIG": "1",
    "LOGFIRE_SEND_TO_LOGFIRE": "false",
}


def set_offline_env() -> None:
    """Set the library switches above in this process (and so in its children)."""
    os.environ.update(OFFLINE_ENV)
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        os.environ.pop(name, None)


@contextmanager
def offline_env(**extra: str) -> Iterator[None]:
    """Within the block the switches above (and `extra`) are set and proxies unset; the environment is then restored."""
    saved = dict(os.environ)
    set_offline_env()
    os.environ.update(extra)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextmanager
def no_network(attempts: list[str]) -> Iterator[list[str]]:
    """Within the block, connecting to or resolving any non-loopback host raises OSError and is logged in `attempts`."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def refuse(host: object) -> None:
        attempts.append(str(host))
        raise OSError(f"benchmark peers run offline: refused a connection to {host}")

    def local(address: object) -> bool:
        # A Unix socket (a path) stays local; an (host, port, ...) tuple must name the loopback interface.
        return not isinstance(address, tuple) or address[0] in _LOOPBACK or str(address[0]).startswith("127.")

    def connect(self: socket.socket, address: object) -> None:
        if not local(address):
            refuse(address[0])  # type: ignore[index]
        real_connect(self, address)  # type: ignore[arg-type]

    def connect_ex(self: socket.socket, address: object) -> int:
        if not local(address):
            refuse(address[0])  # type: ignore[index]
        return real_connect_ex(self, address)  # type: ignore[arg-type]

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> list:
        if not local((host,)):
            refuse(host)
        return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    socket.socket.connect, socket.socket.connect_ex = connect, connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    try:
        yield attempts
    finally:
        socket.socket.connect, socket.socket.connect_ex = real_connect, real_connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = real_getaddrinfo  # type: ignore[assignment]
