"""The listening socket of orcmem's servers: 127.0.0.1 only, listening before the address is printed, and a clear
error for a port that is taken (for `orcmem ui --port` and `orcmem mcp --http --port` alike)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from orcmem.host.loopback import bind_loopback
from orcmem.models.errors import OrcmemError


def test_a_taken_port_is_a_clear_error() -> None:
    taken = bind_loopback(0)
    try:
        port = taken.getsockname()[1]
        with pytest.raises(OrcmemError, match=f"Cannot listen on 127.0.0.1:{port}.*another --port"):
            bind_loopback(port)
    finally:
        taken.close()


def test_the_server_only_binds_loopback() -> None:
    sock = bind_loopback(0)
    try:
        assert sock.getsockname()[0] == "127.0.0.1"
    finally:
        sock.close()


def test_the_printed_address_takes_connections_before_the_server_accepts() -> None:
    # A server prints its address before uvicorn starts; a client that opens it at once is queued, not refused.
    sock = bind_loopback(0)
    try:
        with socket.create_connection(sock.getsockname(), timeout=2):
            pass
    finally:
        sock.close()


@pytest.mark.parametrize("command", [["ui", "--no-open"], ["mcp", "--http"]])
def test_both_servers_report_a_taken_port_in_one_line(command: list[str], orcmem_home: Path, project_dir: Path) -> None:
    taken = bind_loopback(0)
    try:
        port = str(taken.getsockname()[1])
        result = subprocess.run(
            [sys.executable, "-m", "orcmem", "--project", str(project_dir), *command, "--port", port],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        taken.close()
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"orcmem: Cannot listen on 127.0.0.1:{port} (Address already in use). Choose another --port, or leave it "
        "out to use a free one."
    ]
