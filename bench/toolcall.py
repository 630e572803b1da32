"""Memory when the agent acts: what `orcmem hook pre-tool-use` costs per tool call (with the warm server, against
`python -c pass`; without it, against today's prompt hook) and its precision and coverage on a scripted set of
tool calls against a profile of 10,000 memories, some of which cite files."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.agents import _handshake, _start, _stop, _wall
from bench.common import Latency, latency, synthetic_memories
from orcmem.host.warm import TOOL_MODE, ask, ask_for_hook
from orcmem.host.workspace import locate
from orcmem.models.types import NewMemory, Source
from orcmem.service.memory_service import MemoryService

MEMORIES = 10_000
CITED = 200  # files a memory cites (one memory each)
UNCITED = 1_000  # files no memory cites, touched by the script too
SERVER_TIMEOUT_S = 60.0


@dataclass
class ToolcallResult:
    """Cost and quality of memory at tool time."""

    memories: int
    python_bare: Latency  # the floor, each run right before a warm hook run
    hook_warm: Latency  # `orcmem hook pre-tool-use`, answered by the warm server
    hook_direct: Latency  # the same with no server running (citations and words, no model)
    prompt_direct: Latency  # today's `orcmem hook prompt` with no server running
    cited_touches: int
    cited_found: int  # first touches of a cited file whose memory reached the output
    uncited_touches: int
    uncited_silent: int  # touches of an uncited file that printed nothing
    repeats_silent: int  # second touches (same session) of a cited file that printed nothing


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=b@b", "-c", "user.name=b", *args], check=True, capture_output=True
    )


def _profile(home: Path, project: Path) -> dict[str, str]:
    """10,000 memories, CITED of them each citing one file of a real git repository; {file: its memory's title}."""
    titles: dict[str, str] = {}
    for number in range(CITED + UNCITED):
        folder = project / "src" / f"pkg{number % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"module_{number}.py").write_text(f"def handler_{number}():\n    return {number}\n")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", ".")
    _git(project, "commit", "-q", "-m", "files")
    svc = MemoryService.open(home, vectors=False)
    svc.settings.set_enabled(True)
    proj = svc.project(locate(project))
    assert proj is not None
    with svc.store.db.transaction():  # the search benchmark's synthetic memories, in the same project
        for memory in synthetic_memories(MEMORIES - CITED):
            svc.record(proj, memory, embed=False)
    for number in range(CITED):
        path = f"src/pkg{number % 20}/module_{number}.py"
        title = f"handler_{number} must stay idempotent"
        body = f"`handler_{number}` is retried by the queue: never add side effects before the commit"
        svc.record(
            proj, NewMemory(type="lesson", title=title, body=body, source=Source.USER, files=(path,)), embed=False
        )
        titles[path] = title
    svc.check_freshness(proj)
    svc.close()
    return titles


def _call(project: Path, session: str, path: str, tool: str = "Read") -> bytes:
    """Claude Code's PreToolUse payload for a file tool."""
    return json.dumps(
        {
            "session_id": session,
            "cwd": str(project),
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": {"file_path": str(project / path) if tool == "Read" else path},
            "permission_mode": "default",
        }
    ).encode()


def _hook(orcmem: str, name: str, payload: bytes, env: dict[str, str]) -> tuple[float, bytes]:
    started = time.perf_counter()
    done = subprocess.run([orcmem, "hook", name], input=payload, capture_output=True, env=env, check=False)
    return time.perf_counter() - started, done.stdout


def run(samples: int = 60) -> ToolcallResult:
    """Build the profile, run the scripted calls against the warm server, then time the hook with and without it."""
    work = Path(tempfile.mkdtemp(prefix="orcmem-bench-toolcall-"))
    home, project = work / "home", work / "project"
    titles = _profile(home, project)
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"
    env = {**os.environ, "ORCMEM_HOME": str(home)}
    proc = _start(orcmem, project, env)
    try:
        _handshake(proc)
        deadline = time.monotonic() + SERVER_TIMEOUT_S
        while ask(str(home), {"prompt": "warm up", "cwd": str(project)})[0] is None:
            if time.monotonic() > deadline:
                raise RuntimeError("the warm server did not answer")
            time.sleep(0.1)
        found = repeats = silent = 0
        for number, (path, title) in enumerate(titles.items()):
            tool = "Read" if number % 2 else "Edit"  # absolute and relative paths both
            first, _ = ask_for_hook(str(home), _call(project, f"first-{number}", path, tool), mode=TOOL_MODE)
            found += title.encode() in (first or b"")
            again, _ = ask_for_hook(str(home), _call(project, f"first-{number}", path, tool), mode=TOOL_MODE)
            repeats += again == b""
        for number in range(CITED, CITED + UNCITED):
            path = f"src/pkg{number % 20}/module_{number}.py"
            answer, _ = ask_for_hook(str(home), _call(project, f"uncited-{number}", path), mode=TOOL_MODE)
            silent += answer == b""
        floor, warm = [], []
        paths = list(titles)
        for number in range(samples):
            floor.append(_wall([sys.executable, "-c", "pass"], ""))
            payload = _call(project, f"warm-{number}", paths[number % len(paths)])
            warm.append(_hook(orcmem, "pre-tool-use", payload, env)[0])
    finally:
        _stop(proc)
    direct, prompt = [], []
    for number in range(samples):
        payload = _call(project, f"direct-{number}", list(titles)[number % len(titles)])
        direct.append(_hook(orcmem, "pre-tool-use", payload, env)[0])
        ask_prompt = {"session_id": f"p-{number}", "cwd": str(project), "prompt": f"why is handler_{number} retried"}
        prompt.append(_hook(orcmem, "prompt", json.dumps(ask_prompt).encode(), env)[0])
    shutil.rmtree(work, ignore_errors=True)
    return ToolcallResult(
        MEMORIES,
        latency(floor),
        latency(warm),
        latency(direct),
        latency(prompt),
        CITED,
        found,
        UNCITED,
        silent,
        repeats,
    )


def render(result: ToolcallResult) -> list[str]:
    """The section of docs/benchmarks.md."""
    r = result
    warm_ratio = r.hook_warm.p50 / r.python_bare.p50
    direct_ratio = r.hook_direct.p50 / r.prompt_direct.p50
    return [
        "## Memory when the agent acts (the tool hook)",
        "",
        "`orcmem hook pre-tool-use` on Claude Code's PreToolUse payload for Read and Edit, on a profile of",
        f"{r.memories:,} memories ({CITED} of them each cite one file of the project's git repository, the rest",
        "are the synthetic memories of the search benchmark). Process start to exit, milliseconds, p50 / p95; each",
        "warm run right after a `python -c pass` run. `python -m bench.toolcall` runs this section alone.",
        "",
        "| | p50 / p95 | ratio |",
        "|---|---:|---:|",
        f"| `python -c pass` (the floor) | {r.python_bare.cell()} | 1.00 |",
        f"| tool hook, warm server running | {r.hook_warm.cell()} | {warm_ratio:.2f} x the floor |",
        f"| prompt hook, no server (today's direct path) | {r.prompt_direct.cell()} | 1.00 |",
        f"| tool hook, no server (citations and words, no model) | {r.hook_direct.cell()} "
        f"| {direct_ratio:.2f} x the prompt hook |",
        "",
        f"Targets: at most 2 x the floor with the warm server: {'met' if warm_ratio <= 2 else '**missed**'}; no "
        f"slower than the prompt hook without it: {'met' if direct_ratio <= 1.0 else '**missed**'}.",
        "",
        "Precision and coverage on a scripted set of calls, asked of the warm server (each first touch in a session",
        "of its own):",
        "",
        f"- a cited file's first touch brought its memory: {r.cited_found} of {r.cited_touches} "
        f"({100 * r.cited_found / r.cited_touches:.1f} %, target 95 %);",
        f"- a file no memory cites printed nothing: {r.uncited_silent} of {r.uncited_touches} "
        f"({100 * r.uncited_silent / r.uncited_touches:.1f} %, target 99 %);",
        f"- the same file again in the same session printed nothing: {r.repeats_silent} of {r.cited_touches}.",
    ]


def main(argv: list[str] | None = None) -> int:
    """Run this section alone and print it."""
    parser = argparse.ArgumentParser(prog="python -m bench.toolcall", description=__doc__)
    parser.add_argument("--samples", type=int, default=60, help="timed hook runs of each kind")
    args = parser.parse_args(argv)
    print("\n".join(render(run(args.samples))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
