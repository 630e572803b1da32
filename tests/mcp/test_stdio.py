"""`orcmem mcp` over stdio as a real subprocess: the SDK's stdio client, start-up time, the early initialize."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from orcmem.mcp_server.root import TOOL_LIST_FILE
from orcmem.mcp_server.wire import HANDSHAKE_VERSIONS, StdioWire, initialize_result
from orcmem.service.memory_service import MemoryService
from tests.mcp.support import Elicitor, answer

SERVER = (
    "import sys; from pathlib import Path; from orcmem.mcp_server.root import run_stdio; "
    "sys.exit(run_stdio(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], allow_download=False, "
    "early_initialize=sys.argv[4] == 'early'))"
)
ALL_TOOLS = {"memory_search", "memory_recall", "memory_record", "memory_feedback", "task_context", "memory_manage"}
START_BOUND_S = 10.0  # a sanity bound only: the real figure is printed (about 0.05 s here)


def server_command(home: Path, project_dir: Path, mode: str = "accept-edits", early: bool = True) -> list[str]:
    return [sys.executable, "-c", SERVER, str(home), str(project_dir), mode, "early" if early else "late"]


def rpc(method: str, params: dict | None = None, id: int | None = None) -> bytes:
    message: dict = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if id is not None:
        message["id"] = id
    return (json.dumps(message) + "\n").encode()


def initialize(version: str = "2025-06-18") -> bytes:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}
    return rpc("initialize", params, id=1)


def talk(command: list[str], *lines: bytes, timeout: float = 60.0) -> tuple[list[dict], str, list[float]]:
    """Send each line after the previous answer (notifications get none); return answers, stderr and times."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    answers: list[dict] = []
    times: list[float] = []
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for line in lines:
            proc.stdin.write(line)
            proc.stdin.flush()
            if b'"id"' in line:
                answers.append(json.loads(proc.stdout.readline()))
                times.append(time.perf_counter() - start)
        proc.stdin.close()
        proc.wait(timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.stderr is not None
    return answers, proc.stderr.read().decode(), times


def test_the_pinned_handshake_versions_match_the_sdk() -> None:
    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": True, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
        ["not", "an", "object"],
    ],
)
def test_only_a_well_formed_initialize_is_answered_early(message: object) -> None:
    assert initialize_result(message, name="orcmem", version="0", instructions=None) is None


def test_the_sdks_answer_to_the_replayed_initialize_is_dropped_and_compared(capsys: pytest.CaptureFixture[str]) -> None:
    wire = StdioWire(server_name="orcmem", version="0", instructions=None)
    wire.answered_early[1] = {"protocolVersion": "2025-06-18"}
    assert wire.outgoing('{"jsonrpc":"2.0","method":"notifications/message"}')
    assert not wire.outgoing('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}')
    assert wire.mismatch is not None and "2025-11-25" in wire.mismatch
    assert "differs from the SDK's" in capsys.readouterr().err
    assert wire.outgoing('{"jsonrpc":"2.0","id":1,"result":{}}')  # only the first answer is dropped


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_the_pinned_tool_list_is_the_sdks(orcmem_home: Path, project_dir: Path, version: str) -> None:
    """tools.json, answered before the SDK loads, is what the SDK itself lists (ORCMEM_UPDATE_TOOL_LIST=1 rewrites
    it after a change to the tools)."""
    MemoryService.open(orcmem_home, vectors=False).settings.set_enabled(True)
    lines = (initialize(version), rpc("notifications/initialized"), rpc("tools/list", id=2))
    late, stderr, _ = talk(server_command(orcmem_home, project_dir, early=False), *lines)
    listed = late[1]["result"]
    if os.environ.get("ORCMEM_UPDATE_TOOL_LIST"):
        TOOL_LIST_FILE.write_text(json.dumps(listed, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert listed == json.loads(TOOL_LIST_FILE.read_text(encoding="utf-8")), "run with ORCMEM_UPDATE_TOOL_LIST=1"


@pytest.mark.parametrize("memory_on", [True, False])
def test_tools_are_listed_before_the_sdk_loads_as_the_sdk_lists_them(
    orcmem_home: Path, project_dir: Path, memory_on: bool
) -> None:
    MemoryService.open(orcmem_home, vectors=False).settings.set_enabled(memory_on)
    lines = (initialize(), rpc("notifications/initialized"), rpc("tools/list", id=2), rpc("tools/list", {}, id=3))
    early, stderr, times = talk(server_command(orcmem_home, project_dir), *lines)
    late, _, late_times = talk(server_command(orcmem_home, project_dir, early=False), *lines)
    assert "differs" not in stderr, stderr  # the SDK's own answers, compared and dropped, were the same
    assert early == late and early[1] == {**early[2], "id": 2}
    names = {tool["name"] for tool in early[1]["result"]["tools"]}
    assert names == (ALL_TOOLS if memory_on else {"task_context"})
    print(f"\ntools/list answered after {times[1] * 1000:.0f} ms (SDK-only: {late_times[1] * 1000:.0f} ms)")


def test_a_paged_or_odd_tools_list_is_left_to_the_sdk() -> None:
    calls: list[int] = []
    wire = StdioWire(server_name="orcmem", version="0", instructions=None, tools_early=lambda: calls.append(1) or {})
    wire._initialized_early = True
    wire.write = lambda message: None  # type: ignore[method-assign]
    for line in (
        rpc("tools/list", {"cursor": "2"}, id=5),
        rpc("tools/list", None, id=None),
        rpc("tools/list", "params", id=6),
        b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}',
    ):
        wire._answer_tools_list(line)
    assert calls == [] and wire.answered_early == {}
    wire._answer_tools_list(rpc("tools/list", id=7))
    assert calls == [1] and 7 in wire.answered_early


@pytest.mark.parametrize("version", ["2025-06-18", "1999-01-01"])
def test_initialize_is_answered_at_once_exactly_as_the_sdk_would(
    service: MemoryService, orcmem_home: Path, project_dir: Path, version: str
) -> None:
    lines = (initialize(version), rpc("notifications/initialized"), rpc("tools/list", id=2))
    early, stderr, times = talk(server_command(orcmem_home, project_dir), *lines)
    assert "differs" not in stderr, stderr
    late, _, late_times = talk(server_command(orcmem_home, project_dir, early=False), *lines)
    assert early[0] == late[0]  # the same answer, whoever gave it
    assert early[0]["result"]["protocolVersion"] == (version if version in HANDSHAKE_VERSIONS else "2025-11-25")
    assert {tool["name"] for tool in early[1]["result"]["tools"]} == ALL_TOOLS
    print(
        f"\nstdio start-up: initialize answered after {times[0] * 1000:.0f} ms "
        f"(SDK-only: {late_times[0] * 1000:.0f} ms), tools/list after {times[1] * 1000:.0f} ms"
    )
    assert times[0] < START_BOUND_S


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_the_sdks_stdio_client_initializes_lists_asks_and_calls(
    service: MemoryService, orcmem_home: Path, project_dir: Path, tmp_path: Path, era: str
) -> None:
    command = server_command(orcmem_home, project_dir, mode="review")
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    elicitor = Elicitor(answer("Allow once"))
    with (tmp_path / "server.err").open("w+") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode=era, elicitation_callback=elicitor) as c:
            assert {tool.name for tool in (await c.list_tools()).tools} == ALL_TOOLS
            recorded = await c.call_tool(
                "memory_record", {"type": "command", "title": "Run the tests", "body": "uv run pytest -q"}
            )
            assert not recorded.is_error, recorded.content
            assert len(elicitor.questions) == 1  # review mode asked through elicitation over the real wire
            found = await c.call_tool("memory_search", {"query": "tests"})
            assert json.loads(found.content[0].text)["memories"][0]["title"] == "Run the tests"  # type: ignore[union-attr]
        errlog.seek(0)
        assert "differs" not in errlog.read()


@pytest.mark.anyio
async def test_python_m_runs_the_server_and_memory_off_leaves_task_context(
    service: MemoryService, project_dir: Path
) -> None:
    service.settings.set_enabled(False)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "orcmem.mcp_server", "--project", str(project_dir)], env=dict(os.environ)
    )
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as c:
            assert [tool.name for tool in (await c.list_tools()).tools] == ["task_context"]
            context = await c.call_tool("task_context", {})
            assert context.content[0].text.startswith("No task context")  # type: ignore[union-attr]


def test_importing_the_server_package_loads_neither_the_sdk_nor_the_service() -> None:
    heavy = ("mcp", "pydantic", "anyio", "orcmem.service", "orcmem.app.runtime", "apsw")
    code = f"import sys, orcmem.mcp_server; print([m for m in {heavy!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_a_bad_mode_in_the_environment_is_a_usage_error(project_dir: Path) -> None:
    env = {**os.environ, "ORCMEM_MCP_MODE": "careful"}
    command = [sys.executable, "-m", "orcmem.mcp_server", "--project", str(project_dir)]
    result = subprocess.run(command, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=60)
    assert result.returncode == 2
    assert "ORCMEM_MCP_MODE='careful' is not a mode" in result.stderr


def test_every_request_is_answered_even_a_lone_surrogate_or_an_oversized_line(
    service: MemoryService, orcmem_home: Path, project_dir: Path
) -> None:
    from orcmem.mcp_server.wire import MAX_LINE_BYTES

    surrogate = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_search","arguments":'
    surrogate += b'{"query":"pool \\ud800 crash"}}}\n'
    huge = rpc("tools/call", {"name": "memory_record", "arguments": {"title": "x" * (MAX_LINE_BYTES * 4)}}, id=3)
    started = time.perf_counter()
    answers, _stderr, _times = talk(
        server_command(orcmem_home, project_dir),
        initialize(),
        rpc("notifications/initialized"),
        surrogate,
        huge,
        rpc("tools/list", id=4),
    )
    assert [answer["id"] for answer in answers] == [1, 2, 3, 4]
    assert "result" in answers[1]  # searched, the lone surrogate replaced
    assert answers[2]["error"]["code"] == -32600 and "too large" in answers[2]["error"]["message"]
    assert {tool["name"] for tool in answers[3]["result"]["tools"]} >= {"memory_search"}
    assert time.perf_counter() - started < 30  # refused without reading the megabytes into memory
