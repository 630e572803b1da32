"""The MCP server as an agent starts it: time to answer `initialize`, and recall through the warm server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import Latency, embedded_service, latency, onnx_loaded, profile_with_memories
from bench.search import queries

PROTOCOL = "2025-06-18"
MODEL_LOAD_TIMEOUT_S = 120.0


@dataclass
class AgentsResult:
    """Figures for the MCP server."""

    initialize: Latency  # process start to the initialize answer
    tools_ready: Latency  # process start to the tools/list answer
    warm_recall: Latency  # one memory_recall call on a running server, 10,000 memories, words and meaning
    warm_recall_hits: float
    model_loaded: bool  # the server's model had loaded before recall was timed (so it recalled by meaning too)


def _request(method: str, params: dict, ident: int | None) -> bytes:
    message: dict = {"jsonrpc": "2.0", "method": method, "params": params}
    if ident is not None:
        message["id"] = ident
    return (json.dumps(message) + "\n").encode()


def _read_answer(proc: subprocess.Popen, ident: int) -> dict:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("the server closed its output")
        message = json.loads(line)
        if message.get("id") == ident:
            return message


def _start(orcmem: str, project: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [orcmem, "mcp", "--project", str(project), "--mode", "accept-edits"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def _handshake(proc: subprocess.Popen) -> None:
    assert proc.stdin is not None
    init = {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    proc.stdin.write(_request("initialize", init, 1))
    proc.stdin.flush()
    _read_answer(proc, 1)
    proc.stdin.write(_request("notifications/initialized", {}, None))
    proc.stdin.flush()


def _stop(proc: subprocess.Popen) -> None:
    if proc.stdin:
        proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run(samples: int = 15) -> AgentsResult:
    """Start the server `samples` times; then time recall calls on one warm server over 10,000 memories.

    The profile holds the model and a vector for every memory, as a user's does, so the server loads the model
    as it starts and its recall uses meaning as well as words.
    """
    work = Path(tempfile.mkdtemp(prefix="orcmem-bench-agents-"))
    home, project = work / "home", work / "project"
    profile_with_memories(home, project, 10_000)
    embedded_service(home).close()
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"
    env = {**os.environ, "ORCMEM_HOME": str(home)}
    init_times, ready_times = [], []
    for _ in range(samples):
        started = time.perf_counter()
        proc = _start(orcmem, project, env)
        _handshake(proc)
        init_times.append(time.perf_counter() - started)
        assert proc.stdin is not None
        proc.stdin.write(_request("tools/list", {}, 2))
        proc.stdin.flush()
        _read_answer(proc, 2)
        ready_times.append(time.perf_counter() - started)
        _stop(proc)

    proc = _start(orcmem, project, env)
    _handshake(proc)
    assert proc.stdin is not None
    deadline = time.monotonic() + MODEL_LOAD_TIMEOUT_S
    while not onnx_loaded(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)  # the model's first run after loading, and the in-memory vector copy
    model_loaded = onnx_loaded(proc.pid)
    recall_times, hits = [], 0
    prompts = queries(200)
    for ident, prompt in enumerate(prompts, start=10):
        arguments = {"prompt": prompt, "session_id": "bench", "cwd": str(project)}
        started = time.perf_counter()
        proc.stdin.write(_request("tools/call", {"name": "memory_recall", "arguments": arguments}, ident))
        proc.stdin.flush()
        answer = _read_answer(proc, ident)
        recall_times.append(time.perf_counter() - started)
        content = answer.get("result", {}).get("content") or [{}]
        hits += bool(content[0].get("text"))
    _stop(proc)
    shutil.rmtree(work, ignore_errors=True)
    return AgentsResult(
        latency(init_times), latency(ready_times), latency(recall_times[5:]), hits / len(prompts), model_loaded
    )
