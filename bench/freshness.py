"""The freshness check (docs/freshness.md) on a real git repository: 10,000 memories citing 2,000 files, the first
check and an incremental one after 20 files change, and the hooks with and without stored outcomes.

`python -m bench.freshness`; `python -m bench` reports it.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import Latency, latency
from orcmem.host.workspace import locate
from orcmem.models.types import NewMemory, Source
from orcmem.service.memory_service import MemoryService

MEMORIES, FILES, CHANGED, DELETED = 10_000, 2_000, 20, 5
HOOK_SAMPLES = 30
TARGET_FIRST_S, TARGET_INCREMENTAL_S = 5.0, 0.2


@dataclass
class FreshnessResult:
    """The section's figures."""

    first_s: float
    first_read: int
    incremental_s: float
    incremental_read: int
    stale_after: int  # memories marked after the 20 files changed (each change removed one named function)
    should: int  # memories whose cited file was deleted or whose named function vanished
    caught: int  # of those, marked
    wrongly: int  # memories about unchanged code that were marked
    prompt_before: Latency
    prompt_after: Latency
    start_before: Latency
    start_after: Latency


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def _source(n: int) -> str:
    return "".join(f"def handler_{n}_{k}(request):\n    return respond(request, {k})\n\n" for k in range(8))


def run(work: Path | None = None) -> FreshnessResult:
    """Build the repository and the profile, then time."""
    work = work or Path(tempfile.mkdtemp(prefix="orcmem-bench-freshness-"))
    try:
        root, home = work / "repo", work / "home"
        (root / "src").mkdir(parents=True)
        for n in range(FILES):
            (root / "src" / f"module_{n}.py").write_text(_source(n))
        _git(root, "init", "-q")
        _git(root, "add", ".")
        _git(root, "-c", "user.email=b@b", "-c", "user.name=b", "commit", "-q", "-m", "code")
        svc = MemoryService.open(home, vectors=False)
        svc.settings.set_enabled(True)
        project = svc.project(locate(root))
        assert project is not None
        rng = random.Random(3)
        cites: dict[str, tuple[int, int]] = {}
        with svc.store.db.transaction():
            for i in range(MEMORIES):
                n, k = rng.randrange(FILES), rng.randrange(8)
                memory = NewMemory(
                    "lesson",
                    f"Handler {n}.{k} retries",
                    f"`handler_{n}_{k}` retries twice before it answers 503 (case {i})",
                    Source.AGENT,
                    files=(f"src/module_{n}.py",),
                )
                cites[svc.record(project, memory).memory.id] = (n, k)
        prompts = [f"why does handler {n} answer 503" for n in range(HOOK_SAMPLES)]
        prompt_before, start_before = _hooks(home, root, prompts)
        started = time.perf_counter()
        first = svc.check_freshness(project)
        first_s = time.perf_counter() - started
        touched = rng.sample(range(FILES), CHANGED + DELETED)
        changed, deleted = set(touched[:CHANGED]), set(touched[CHANGED:])
        for n in changed:
            path = root / "src" / f"module_{n}.py"
            path.write_text(_source(n).replace(f"def handler_{n}_0(", f"def renamed_{n}_0("))
        for n in deleted:
            (root / "src" / f"module_{n}.py").unlink()
        started = time.perf_counter()
        again = svc.check_freshness(project)
        incremental_s = time.perf_counter() - started
        prompt_after, start_after = _hooks(home, root, prompts)
        svc.close()
        should = {m for m, (n, k) in cites.items() if n in deleted or (n in changed and k == 0)}
        marked = {memory_id for memory_id, *_ in again.stale}
        return FreshnessResult(
            first_s,
            first.files_read,
            incremental_s,
            again.files_read,
            len(again.stale),
            len(should),
            len(should & marked),
            len(marked - should),
            prompt_before,
            prompt_after,
            start_before,
            start_after,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _hooks(home: Path, root: Path, prompts: list[str]) -> tuple[Latency, Latency]:
    """`orcmem hook prompt` and `orcmem hook session-start`, each as a new process."""
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"
    env = {**os.environ, "ORCMEM_HOME": str(home)}
    times: dict[str, list[float]] = {"prompt": [], "session-start": []}
    for text in prompts:
        for hook in times:
            payload = {"session_id": "bench", "cwd": str(root), "prompt": text, "source": "startup"}
            started = time.perf_counter()
            subprocess.run([orcmem, "hook", hook], input=json.dumps(payload), text=True, env=env, capture_output=True)
            times[hook].append(time.perf_counter() - started)
    return latency(times["prompt"]), latency(times["session-start"])


def render(r: FreshnessResult) -> list[str]:
    """The report section."""

    def met(ok: bool) -> str:
        return "met" if ok else "**missed**"

    return [
        "## Memories that know when the code moved on",
        "",
        f"`python -m bench.freshness`: a git repository of {FILES:,} Python files, {MEMORIES:,} memories each citing",
        "one file and naming one of its functions (fingerprinted when written). Then the first check, and one after",
        f"{CHANGED} files changed (each lost one of its functions) and {DELETED} were deleted.",
        "",
        "| what | figure | target |",
        "|---|---:|---|",
        f"| first check ({r.first_read:,} files read) | {r.first_s:.2f} s | at most {TARGET_FIRST_S:.0f} s: "
        f"{met(r.first_s <= TARGET_FIRST_S)} |",
        f"| incremental check after {CHANGED + DELETED} files changed or went ({r.incremental_read} files read, "
        f"{r.stale_after} memories marked possibly stale) | {r.incremental_s * 1000:.0f} ms | "
        f"at most {TARGET_INCREMENTAL_S * 1000:.0f} ms: {met(r.incremental_s <= TARGET_INCREMENTAL_S)} |",
        f"| memories whose cited file went or whose named function vanished, marked | {r.caught} of {r.should} "
        f"({r.caught / max(1, r.should):.0%}) | every one |",
        f"| memories about unchanged code, marked | {r.wrongly} of {MEMORIES - r.should:,} | none |",
        f"| `orcmem hook prompt` p50, before any check / after (outcomes stored) | {r.prompt_before.p50:.1f} / "
        f"{r.prompt_after.p50:.1f} ms | no growth |",
        f"| `orcmem hook session-start` p50, before / after | {r.start_before.p50:.1f} / {r.start_after.p50:.1f} ms | "
        "no growth |",
        "",
    ]


def main() -> None:
    """Print the section."""
    print("\n".join(render(run())))


if __name__ == "__main__":
    main()
