"""`orcmem add` as a person runs it: process start to exit, with the session's warm server running (it makes the
vector) and with none (a background worker does). `python -m bench.writes`; `python -m bench` reports it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import Latency, embedded_service, latency, profile_with_memories
from orcmem.host.warm import WARM_PATH, ask
from orcmem.worker.control import stop_workers

MEMORIES = 2_000
RUNS = 20
IDLE_TARGET_MS = 150.0
SERVER_WAIT_S = 120.0


@dataclass(frozen=True)
class WritesResult:
    """`orcmem add` wall times."""

    with_server: Latency
    without_server: Latency
    memories: int
    traits_ms: float  # what a write adds to keep the audit's traits of its text (facts, generic rule), mean per write


def _adds(orcmem: str, project: Path, env: dict[str, str], tag: str) -> Latency:
    times = []
    for number in range(RUNS):
        title = f"{tag} write {number}"
        started = time.perf_counter()
        subprocess.run(
            [orcmem, "add", "--type", "lesson", "--title", title, "--body", "Timed by bench.writes."],
            cwd=project,
            env=env,
            capture_output=True,
            check=True,
        )
        times.append(time.perf_counter() - started)
    return latency(times)


def traits_cost(count: int = MEMORIES) -> float:
    """The mean milliseconds a write spends working out the audit's traits of its text (`service/audit.note_written`:
    the facts and the generic rule), over `count` synthetic memories, in this process."""
    from bench.search import synthetic_memories
    from orcmem.service.audit_parallel import traits_of

    texts = [(new.title, new.body, False) for new in synthetic_memories(count, seed=11)]
    started = time.perf_counter()
    for text in texts:
        traits_of([text])
    return (time.perf_counter() - started) * 1000 / max(1, count)


def run() -> WritesResult:
    """Time `orcmem add` on a profile with the model and every vector, without and then with a server."""
    work = Path(tempfile.mkdtemp(prefix="orcmem-bench-writes-"))
    home, project = work / "home", work / "project"
    profile_with_memories(home, project, MEMORIES)
    embedded_service(home).close()
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"
    env = {**os.environ, "ORCMEM_HOME": str(home)}
    try:
        without_server = _adds(orcmem, project, env, "cold")
        stop_workers(home)
        server = subprocess.Popen(
            [orcmem, "mcp", "--project", str(project)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        try:
            deadline = time.monotonic() + SERVER_WAIT_S
            while ask(str(home), {"prompt": "x", "cwd": str(project)})[1] != WARM_PATH:
                if time.monotonic() > deadline:
                    raise SystemExit("the server's model did not load")
                time.sleep(0.2)
            with_server = _adds(orcmem, project, env, "warm")
        finally:
            server.kill()
            server.wait()
    finally:
        stop_workers(home)
        shutil.rmtree(work, ignore_errors=True)
    return WritesResult(with_server, without_server, MEMORIES, traits_cost())


def render(r: WritesResult) -> list[str]:
    """The report section."""
    met = lambda ok: "met" if ok else "**missed**"  # noqa: E731
    return [
        "## Writes that do not wait for the model",
        "",
        f"`orcmem add` on a profile of {r.memories:,} memories with the model and every vector, {r.with_server.samples}"
        " runs each, one after",
        "another, process start to exit (`python -m bench.writes`). The command stores the memory (found by words at",
        "once) and hands its vector to the session's warm server, or, with none running, to a background",
        "`orcmem worker` that loads the model; it no longer loads the model itself (1.2 s idle and 8.1 s p50 under",
        "the load test before; *Under load* has today's figure). Milliseconds, p50 / p95.",
        "",
        "| | wall time |",
        "|---|---:|",
        f"| with the session's `orcmem mcp` running (it makes the vector) | {r.with_server.cell()} |",
        f"| with no server (a background worker loads the model on the other core meanwhile) | "
        f"{r.without_server.cell()} |",
        "",
        f"- At most {IDLE_TARGET_MS:.0f} ms p50 with a server running: {met(r.with_server.p50 <= IDLE_TARGET_MS)} "
        f"({r.with_server.p50:.0f} ms); with none: {met(r.without_server.p50 <= IDLE_TARGET_MS)} "
        f"({r.without_server.p50:.0f} ms).",
        "- What a write adds to keep the store audit's traits of its text (its facts and the generic rule, so the",
        f"  first audit need not work them out): {r.traits_ms:.3f} ms a write, in-process mean over {r.memories:,}",
        f"  synthetic memories, {r.traits_ms / max(r.with_server.p50, 1e-9):.2%} of the p50 write with a server.",
        "- What made the command itself faster: the database finds the sqlite-vec extension without importing its",
        "  Python package (which imported numpy), `cli.py` loads the onboarding, setup, distilling and worker modules",
        "  only in the commands that use them, and `--version` reads orcmem's own version, not the package metadata.",
        "",
    ]


def main() -> None:
    """Print the section."""
    print("\n".join(render(run())))


if __name__ == "__main__":
    main()
