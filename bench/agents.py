"""The MCP server as an agent starts it: time to answer `initialize` and `tools/list`; recall through the warm
server (its time there, and `orcmem hook prompt` asking it, against `python -c pass`)."""

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

from bench.common import Latency, embedded_service, latency, profile_with_memories, queries
from orcmem.host.warm import WARM_PATH, ask

PROTOCOL = "2025-06-18"
MODEL_LOAD_TIMEOUT_S = 120.0


@dataclass
class AgentsResult:
    """Figures for the MCP server."""

    initialize: Latency  # process start to the initialize answer
    tools_ready: Latency  # process start to the tools/list answer
    warm_server: Latency  # one recall by meaning and words, timed inside the server, 10,000 memories
    warm_round_trip: Latency  # the same, asked over the socket from another process
    python_bare: Latency  # the floor, each run right before a hook run
    hook_warm: Latency  # `orcmem hook prompt` answered by the warm server, process start to exit
    warm_recall_hits: float  # share of the timed prompts that got memories
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


def run(samples: int = 30) -> AgentsResult:
    """Start the server `samples` times; then time recall on one warm server over 10,000 memories, asked over its
    socket and through `orcmem hook prompt`.

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
    deadline = time.monotonic() + MODEL_LOAD_TIMEOUT_S
    while _warm_path(home, project) != WARM_PATH and time.monotonic() < deadline:
        time.sleep(0.1)
    model_loaded = _warm_path(home, project) == WARM_PATH
    server_ms, round_trips, floor, hook, hits = [], [], [], [], 0
    prompts = queries(200)
    for prompt in prompts:
        started = time.perf_counter()
        answer, _path = ask(str(home), {"prompt": prompt, "cwd": str(project), "session_id": None})
        round_trips.append(time.perf_counter() - started)
        server_ms.append(float(answer["ms"]) / 1000 if answer else float("nan"))
    for number, prompt in enumerate(prompts[:60]):
        payload = {"session_id": f"bench-{number}", "cwd": str(project), "prompt": prompt}
        floor.append(_wall([sys.executable, "-c", "pass"], ""))
        started = time.perf_counter()
        result = subprocess.run(
            [orcmem, "hook", "prompt"], input=json.dumps(payload).encode(), capture_output=True, env=env
        )
        hook.append(time.perf_counter() - started)
        hits += bool(result.stdout)
    _stop(proc)
    shutil.rmtree(work, ignore_errors=True)
    return AgentsResult(
        latency(init_times),
        latency(ready_times),
        latency(server_ms[5:]),
        latency(round_trips[5:]),
        latency(floor),
        latency(hook),
        hits / len(floor),
        model_loaded,
    )


def _warm_path(home: Path, project: Path) -> str | None:
    """Which path the profile's warm server answers on (None: no server answers yet)."""
    answer, path = ask(str(home), {"prompt": "warm up", "cwd": str(project), "session_id": None})
    return path if answer is not None else None


def _wall(command: list[str], stdin: str) -> float:
    started = time.perf_counter()
    subprocess.run(command, input=stdin, capture_output=True, text=True, check=False, timeout=60)
    return time.perf_counter() - started
