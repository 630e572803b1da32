"""`orcmem backup` and `orcmem import jsonl` of 10,000 memories, as a person runs them (process start to exit), with
the restore's own work timed in one process against the ordinary write path over the same memories (the floor).
`python -m bench.importing`; `python -m bench` reports it."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.common import profile_with_memories
from orcmem.host.workspace import Location
from orcmem.importing.backup import read_backup
from orcmem.models.types import Memory, NewMemory
from orcmem.service.importing import Importing
from orcmem.service.memory_service import MemoryService
from orcmem.worker.control import stop_workers

MEMORIES = 10_000
RUNS = 3


@dataclass(frozen=True)
class ImportingResult:
    """Median seconds of each step."""

    memories: int
    backup_bytes: int
    backup_command_s: float
    restore_command_s: float
    restore_in_process_s: float
    record_floor_s: float


def _fresh_profile(home: Path) -> None:
    service = MemoryService.open(home, vectors=False)
    service.settings.set_enabled(True)
    service.close()


def _timed(command: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - started


def run(memories: int = MEMORIES) -> ImportingResult:
    """Back up a profile of `memories` memories and restore it into new profiles, RUNS times each."""
    work = Path(tempfile.mkdtemp(prefix="orcmem-bench-import-"))
    source, project = work / "source", work / "project"
    profile_with_memories(source, project, memories)
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"
    backup = work / "backup.jsonl"
    backups, restores, in_process, floors = [], [], [], []
    try:
        env = {**os.environ, "ORCMEM_HOME": str(source)}
        for _ in range(RUNS):
            backups.append(_timed([orcmem, "backup", "--out", str(backup)], env, project))
        for number in range(RUNS):
            target = work / f"restored-{number}"
            _fresh_profile(target)
            restores.append(
                _timed([orcmem, "import", "jsonl", str(backup), "--yes"], {**env, "ORCMEM_HOME": str(target)}, project)
            )
            stop_workers(target)
            # The restore's own work in one process, and the ordinary write path over the same memories (floor).
            with backup.open(encoding="utf-8") as handle:
                parsed = read_backup(handle)
            restored = MemoryService.open(work / f"in-process-{number}", vectors=False)
            restored.settings.set_enabled(True)
            importing = Importing(restored)
            started = time.perf_counter()
            importing.restore(importing.plan_restore(parsed), str(backup), None)
            in_process.append(time.perf_counter() - started)
            restored.close()
            floor = MemoryService.open(work / f"floor-{number}", vectors=False)
            floor.settings.set_enabled(True)
            here = floor.project(Location(str(project), str(project), project.name))
            started = time.perf_counter()
            with floor.store.db.transaction():
                for item in parsed.memories:
                    floor.record(here, _as_new(item.memory), embed=False, look_up_meaning=False)
            floors.append(time.perf_counter() - started)
            floor.close()
    finally:
        size = backup.stat().st_size if backup.exists() else 0
        shutil.rmtree(work, ignore_errors=True)
    return ImportingResult(
        memories,
        size,
        statistics.median(backups),
        statistics.median(restores),
        statistics.median(in_process),
        statistics.median(floors),
    )


def _as_new(memory: Memory) -> NewMemory:
    """The write a person would make for this memory."""
    return NewMemory(
        type=memory.type.value,
        title=memory.title,
        body=memory.body,
        source=memory.source,
        topic_key=memory.topic_key,
        scope=memory.scope,
        confidence=memory.confidence,
        files=memory.files,
        provenance=memory.provenance,
    )


def render(r: ImportingResult) -> list[str]:
    """The report section."""
    return [
        "## Backup and restore (JSONL)",
        "",
        f"`orcmem backup --out FILE` of a profile of {r.memories:,} synthetic memories (one project, the search",
        "benchmark's memories), and `orcmem import jsonl FILE --yes` of that file into a new profile, each as a person",
        f"runs it, process start to exit; the median of {RUNS} runs (`python -m bench.importing`). The restore's own",
        "work is also timed inside one process, against the floor measured in the same run: the ordinary write path",
        f"(`service.record`) over the same memories in one transaction. The file is {r.backup_bytes / 2**20:.1f} MiB.",
        "",
        "| step | seconds | memories/s | / floor |",
        "|---|---:|---:|---:|",
        f"| `orcmem backup` (the command) | {r.backup_command_s:.2f} | {r.memories / r.backup_command_s:,.0f} | |",
        f"| `orcmem import jsonl` (the command) | {r.restore_command_s:.2f} "
        f"| {r.memories / r.restore_command_s:,.0f} | |",
        "| the restore inside one process (checked, redacted, flagged, one transaction) "
        f"| {r.restore_in_process_s:.2f} "
        f"| {r.memories / r.restore_in_process_s:,.0f} | {r.restore_in_process_s / r.record_floor_s:.2f} |",
        f"| floor: `service.record` of the same memories, one transaction | {r.record_floor_s:.2f} "
        f"| {r.memories / r.record_floor_s:,.0f} | 1.00 |",
        "",
        f"- The restore costs what writing the same memories costs ({r.restore_in_process_s / r.record_floor_s:.2f} of"
        " the floor). About 80 % of both is the",
        "  instruction flag's detector, which judges each memory's words again (cProfile of a restore of 1,000",
        "  memories: 5.5 of 6.9 s). A backup's own flag is not trusted: a crafted file could unflag orders to an agent",
        "  (`tests/importing/test_import_commands.py`). Keeping the file's flag for unchanged words, tried once,",
        "  restored 2,000 memories in 0.74 s (under cProfile, against 6.9 s for 1,000 with the detector); not adopted.",
        "- Every memory is written in one transaction; the vectors are left to the embedding pump (a background",
        "  worker, or the session's server), so the restore never waits for the model.",
        "- A backup line was first built with `Memory.to_dict` (`dataclasses.asdict`), most of a backup's time; it is",
        "  built field by field now. Most of the command is now starting orcmem and opening the profile.",
        "",
    ]


def main() -> None:
    """Print the section."""
    print("\n".join(render(run())))


if __name__ == "__main__":
    main()
