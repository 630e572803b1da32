"""`orcmem mcp --http` as a real uvicorn server on 127.0.0.1: it refuses a foreign Host or Origin with 403, and any
request without this launch's key with 401."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client

from orcmem.mcp_server.http import ADDRESS_FILE, LoopbackGuard
from orcmem.service.memory_service import MemoryService

SERVER = (
    "import sys; from pathlib import Path; from orcmem.mcp_server.root import run_http; "
    "sys.exit(run_http(Path(sys.argv[1]), Path(sys.argv[2]), 0, 'accept-edits', stop_after=float(sys.argv[4]), "
    "on_ready=lambda port: Path(sys.argv[3]).write_text(str(port)), allow_download=False))"
)
LIFETIME_S = 60  # the server stops by itself after this, whatever happens to the test
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def port(service: MemoryService, orcmem_home: Path, project_dir: Path, tmp_path: Path) -> Iterator[int]:
    """A running server's port; the process is ended after the test (and would end by itself anyway).

    Its launch key is put in HEADERS for the test's requests.
    """
    ready = tmp_path / "port"
    command = [sys.executable, "-c", SERVER, str(orcmem_home), str(project_dir), str(ready), str(LIFETIME_S)]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not (ready.exists() and ready.read_text()):
            if proc.poll() is not None or time.monotonic() > deadline:
                assert proc.stderr is not None
                pytest.fail(f"the HTTP server did not start: {proc.stderr.read().decode()}")
            time.sleep(0.05)
        address = json.loads((orcmem_home / ADDRESS_FILE).read_text())
        HEADERS["Authorization"] = address["headers"]["Authorization"]
        yield int(ready.read_text())
    finally:
        HEADERS.pop("Authorization", None)
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@dataclass
class Reply:
    status_code: int
    text: str


def post(port: int, **headers: str) -> Reply:
    """POST an initialize request; a Host given here replaces the one http.client would send."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", "/mcp", json.dumps(INITIALIZE), {**HEADERS, **headers})
        response = connection.getresponse()
        return Reply(response.status, response.read().decode(errors="replace"))
    finally:
        connection.close()


def test_the_http_server_serves_its_own_origin_and_refuses_others(port: int) -> None:
    assert post(port).status_code == 200
    assert post(port, Host=f"localhost:{port}", Origin=f"http://localhost:{port}").status_code == 200
    for headers in (
        {"Host": "evil.example"},
        {"Host": f"evil.example:{port}"},
        {"Host": f"127.0.0.1:{port + 1}"},
        {"Origin": "http://evil.example"},
        {"Origin": f"http://127.0.0.1:{port + 1}"},
        {"Origin": "null"},
    ):
        refused = post(port, **headers)
        assert refused.status_code == 403, headers
        assert refused.text == "refused"


def test_a_request_without_the_launch_key_is_refused(port: int, orcmem_home: Path) -> None:
    address = orcmem_home / ADDRESS_FILE
    assert address.stat().st_mode & 0o777 == 0o600
    assert json.loads(address.read_text())["url"] == f"http://127.0.0.1:{port}/mcp"
    for value in ("", "Bearer ", "Bearer not-the-key", HEADERS["Authorization"] + "x", "Basic abc"):
        refused = post(port, Authorization=value)
        assert refused.status_code == 401, value
    assert post(port).status_code == 200


@pytest.mark.anyio
async def test_the_sdk_client_works_over_http(port: int) -> None:
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    keyed = create_mcp_http_client(headers={"Authorization": HEADERS["Authorization"]})
    async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=keyed), mode="legacy") as c:
        names = {tool.name for tool in (await c.list_tools()).tools}
        assert "memory_search" in names
        result = await c.call_tool("memory_search", {"query": "anything"})
        assert not result.is_error and json.loads(result.content[0].text) == {"memories": []}  # type: ignore[union-attr]


def test_the_guard_refuses_duplicate_host_headers() -> None:
    guard = LoopbackGuard(app=None, port=8000)  # type: ignore[arg-type]
    assert guard.allows([(b"host", b"127.0.0.1:8000")])
    assert not guard.allows([(b"host", b"127.0.0.1:8000"), (b"host", b"evil.example")])
    assert not guard.allows([])
