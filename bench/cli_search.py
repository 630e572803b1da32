"""`orcmem search` as a person runs it, at 10,000 memories: with the session's warm server running (it answers
over the recall socket, its model loaded) and without one (the command loads the model itself), each run timed
from start to exit, against `python -c pass` as the floor. `python -m bench.cli_search [SIZE]`; `python -m bench`
reports it. `python -m bench.cli_search SIZE WORK` measures the profile a run left in WORK again (building one
embeds every memory, many minutes on a busy machine).
"""

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
from bench.search import queries
from orcmem.host.warm import ask
from orcmem.models.constants import DB_FILENAME

SIZE = 10_000
WARM_RUNS = 40
COLD_RUNS = 12  # each loads the model: about as many seconds
TARGET_MS = 300.0  # p50 with the warm server
READY_TIMEOUT_S = 180.0


@dataclass(frozen=True)
class CliSearchResult:
    """Wall times of `python -c pass`, and of `orcmem search` with and without the warm server."""

    size: int
    floor: Latency
    warm: Latency
    cold: Latency
    warm_answered: bool  # every warm run was answered by the server (no fallback to the command's own path)


def _orcmem() -> str:
    return shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    result = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed: {result.stderr}")
    return elapsed


def _server_ready(home: Path, project: Path) -> bool:
    answer, path = ask(str(home), {"prompt": "probe", "cwd": str(project), "session_id": None})
    return answer is not None and path == "warm"


def run(size: int = SIZE, work: Path | None = None) -> CliSearchResult:
    """Build a profile of `size` embedded memories, then time the command without and with the warm server."""
    work = work or Path(tempfile.mkdtemp(prefix="orcmem-bench-cli-search-"))
    home, project = work / "home", work / "project"
    if not (home / DB_FILENAME).exists():  # a folder of an earlier run is measured again as it is
        profile_with_memories(home, project, size)
        embedded_service(home).close()
    env = {**os.environ, "ORCMEM_HOME": str(home)}
    asked = queries(WARM_RUNS + COLD_RUNS)
    orcmem = _orcmem()

    def floor_then(argv: list[str]) -> tuple[float, float]:
        return _timed([sys.executable, "-c", "pass"], env, project), _timed(argv, env, project)

    floors: list[float] = []
    cold: list[float] = []
    for query in asked[:COLD_RUNS]:
        bare, took = floor_then([orcmem, "search", query])
        floors.append(bare)
        cold.append(took)
    server = subprocess.Popen(
        [orcmem, "mcp", "--project", str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    warm: list[float] = []
    answered = True
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not _server_ready(home, project):
            if time.monotonic() > deadline:
                raise SystemExit("the warm server's model did not load")
            time.sleep(0.5)
        for query in asked[COLD_RUNS:]:
            bare, took = floor_then([orcmem, "search", query])
            floors.append(bare)
            warm.append(took)
        # The last one once more, saying whether the server answered it (the command's own path loads click).
        probe = subprocess.run(
            [sys.executable, "-c", _TELL, "search", asked[-1]], env=env, cwd=project, capture_output=True, text=True
        )
        answered = probe.stderr.strip().endswith("warm path")
    finally:
        server.kill()
        server.wait()
    return CliSearchResult(size, latency(floors), latency(warm), latency(cold), answered)


_TELL = (
    "import sys\n"
    "from orcmem.entry import main\n"
    "sys.argv = ['orcmem', *sys.argv[1:]]\n"
    "try:\n"
    "    main()\n"
    "finally:\n"
    "    sys.stderr.write('full path\\n' if 'click' in sys.modules else 'warm path\\n')\n"
)


def render(r: CliSearchResult) -> list[str]:
    """The report section."""
    verdict = "met" if r.warm.p50 <= TARGET_MS and r.warm_answered else "**missed**"
    return [
        "## `orcmem search` from the command line",
        "",
        f"`orcmem search QUERY` at {r.size:,} embedded memories, timed from start to exit as a person runs it, each",
        "run right after a `python -c pass` (the floor). With the session's warm server (`orcmem mcp`, its model",
        "loaded) the command asks it over the recall socket before loading click, the service or the model; without",
        "one it loads them itself, as before. `python -m bench.cli_search`.",
        "",
        "| what | milliseconds, p50 / p95 | p50 / floor p50 |",
        "|---|---:|---:|",
        f"| `python -c pass` (the floor) | {r.floor.cell()} | 1.00 |",
        f"| `orcmem search`, warm server running ({r.warm.samples} runs) | {r.warm.cell()} | "
        f"{r.warm.p50 / r.floor.p50:.2f} |",
        f"| `orcmem search`, no server ({r.cold.samples} runs; loads the model) | {r.cold.cell()} | "
        f"{r.cold.p50 / r.floor.p50:.2f} |",
        "",
        f"Target: at most {TARGET_MS:.0f} ms p50 with the warm server: {verdict}"
        + ("" if r.warm_answered else " (the server did not answer: the command ran its own path)")
        + ".",
    ]


def main() -> None:
    """Print the section."""
    size = int(sys.argv[1]) if len(sys.argv) > 1 else SIZE
    work = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    print("\n".join(render(run(size, work))))


if __name__ == "__main__":
    main()
