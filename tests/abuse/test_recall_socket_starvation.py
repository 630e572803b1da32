"""No client of the same account can starve the warm recall socket: idle connections, one that trickles a byte a
second, and a flood of connections; the prompt hook is still answered by the warm server, in time."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from orcmem.host.warm import WARM_TIMEOUT_S, ask, ask_for_hook, socket_path
from orcmem.mcp_server.recall_socket import CLIENT_TIMEOUT_S, MAX_CLIENTS, RecallSocket


@pytest.fixture
def server() -> Iterator[tuple[Path, RecallSocket]]:
    """A warm server in a short folder under /tmp (a Unix socket's path is short)."""
    home = Path(tempfile.mkdtemp(dir="/tmp", prefix="om-"))
    running = RecallSocket(home, lambda request: {"text": f"warm answer to {request['prompt']}", "path": "warm"})
    running.start()
    assert running.holding.wait(5)
    yield home, running
    running.close()
    shutil.rmtree(home, ignore_errors=True)


def connect(home: Path) -> socket.socket:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(socket_path(str(home)))
    return client


class Trickler(threading.Thread):
    """A client that sends a request one byte a second, and never finishes it in time."""

    def __init__(self, home: Path) -> None:
        super().__init__(daemon=True)
        self.client = connect(home)
        self.dropped = threading.Event()
        self.stop = threading.Event()

    def run(self) -> None:
        for byte in b'json\n{"prompt": "a very slow request that never ends"}':
            try:
                self.client.send(bytes([byte]))
            except OSError:
                self.dropped.set()
                return
            if self.stop.wait(1.0):
                return


def closed_by_server(client: socket.socket, within: float) -> bool:
    """Whether the server closed this connection (its read ends) within `within` seconds."""
    client.settimeout(within)
    try:
        return client.recv(1) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def test_idle_and_trickling_clients_do_not_starve_the_hook(server: tuple[Path, RecallSocket]) -> None:
    home, _ = server
    idle = [connect(home) for _ in range(20)]
    trickler = Trickler(home)
    trickler.start()
    try:
        time.sleep(0.2)  # the server has accepted them all and reads nothing from them yet
        for attempt in range(3):
            started = time.monotonic()
            output, path = ask_for_hook(
                str(home), json.dumps({"prompt": f"p{attempt}", "cwd": "/", "session_id": "s"}).encode()
            )
            assert path == "warm" and output is not None, path
            assert "warm answer to p" in output.decode()
            assert time.monotonic() - started < WARM_TIMEOUT_S
        reply, path = ask(str(home), {"prompt": "by json"})
        assert reply == {"text": "warm answer to by json", "path": "warm"}
        # Past the deadline for a whole request the idle clients and the trickler are dropped.
        assert all(closed_by_server(client, CLIENT_TIMEOUT_S + 1.5) for client in idle)
        assert trickler.dropped.wait(CLIENT_TIMEOUT_S + 2.5)
    finally:
        trickler.stop.set()
        for client in idle:
            client.close()
        trickler.client.close()


def test_a_flood_of_connections_costs_the_oldest_not_the_server(server: tuple[Path, RecallSocket]) -> None:
    home, _ = server
    flood = [connect(home) for _ in range(MAX_CLIENTS * 2)]
    try:
        time.sleep(0.3)
        reply, path = ask(str(home), {"prompt": "after the flood"})
        assert reply == {"text": "warm answer to after the flood", "path": "warm"}, path
        assert closed_by_server(flood[0], 0.5)  # the oldest made room
    finally:
        for client in flood:
            client.close()


def test_the_prompt_hook_is_answered_warm_while_idle_clients_wait(
    server: tuple[Path, RecallSocket], tmp_path: Path
) -> None:
    """`orcmem hook prompt` itself (a real process) gets the warm server's answer, not its own word fallback."""
    home, _ = server
    idle = [connect(home) for _ in range(20)]
    trickler = Trickler(home)
    trickler.start()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "orcmem", "hook", "prompt"],
            input=json.dumps({"prompt": "the pool", "cwd": str(tmp_path), "session_id": "s"}),
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "ORCMEM_HOME": str(home)},
        )
    finally:
        trickler.stop.set()
        for client in idle:
            client.close()
        trickler.client.close()
    answer = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert answer == "warm answer to the pool", result.stderr


def test_a_client_slow_to_read_a_large_answer_gets_all_of_it_and_holds_up_no_one() -> None:
    """An answer larger than the socket's buffer is written as the client reads it; others are served meanwhile."""
    home = Path(tempfile.mkdtemp(dir="/tmp", prefix="om-"))
    big = "y" * 900_000
    server = RecallSocket(
        home, lambda request: {"text": big if request["prompt"] == "big" else "small", "path": "warm"}
    )
    server.start()
    try:
        assert server.holding.wait(5)
        slow = connect(home)
        slow.sendall(b'json\n{"prompt": "big"}')
        slow.shutdown(socket.SHUT_WR)
        time.sleep(0.2)  # the server has written what fits and waits for this client to read
        reply, path = ask(str(home), {"prompt": "other"})
        assert reply == {"text": "small", "path": "warm"}, path
        slow.settimeout(CLIENT_TIMEOUT_S)
        received = b""
        while chunk := slow.recv(65536):
            received += chunk
        assert json.loads(received) == {"text": big, "path": "warm"}
        slow.close()
    finally:
        server.close()
        shutil.rmtree(home, ignore_errors=True)
