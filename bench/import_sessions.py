"""`orcmem import sessions` over 1,000 past sessions: the time to find and estimate them, and the time per run
distilled with the stand-in distiller against the stand-in's own time.

The sessions are made from the real transcripts in tests/fixtures/agents (a Claude Code session and a Codex 0.171
rollout), their records repeated 1 to 12 times with fresh ids, cwd and timestamps, seven in ten Claude Code's;
as many again belong to other projects and must be passed over. `python -m bench.import_sessions` prints the
figures; `python -m bench` puts them in docs/benchmarks.md.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from bench.common import Latency, latency

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "agents"
STANDIN = REPO / "tests" / "standin_agent.py"
CLAUDE_FIXTURE = FIXTURES / "claude_transcript_sample.jsonl"
CODEX_FIXTURE = FIXTURES / "codex_rollout_0.171_exec.jsonl"


@dataclass(frozen=True)
class ImportResult:
    """What one measurement found."""

    sessions: int  # of the project
    others: int  # of other projects, passed over
    megabytes: float
    find_and_estimate: Latency  # the whole dry run, a fresh process each time
    runs: int  # distilled with the stand-in
    per_run_s: float
    standin_s: float  # the stand-in's own call, same prompts: the floor
    tokens_estimated: int
    tokens_sent: int


def _stamp(base: dt.datetime, minutes: int) -> str:
    return (base + dt.timedelta(minutes=minutes)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _claude_session(path: Path, cwd: str, session: str, repeats: int, at: dt.datetime) -> None:
    lines = CLAUDE_FIXTURE.read_text(encoding="utf-8").splitlines()
    out = []
    for round_ in range(repeats):
        for n, line in enumerate(lines):
            record = json.loads(line)
            record["sessionId"] = session
            if "cwd" in record:
                record["cwd"] = cwd
            if "uuid" in record:
                record["uuid"] = str(uuid.uuid4())
            if "timestamp" in record:
                record["timestamp"] = _stamp(at, round_ * 20 + n)
            message = record.get("message")
            if isinstance(message, dict) and isinstance(message.get("id"), str):
                message["id"] = f"msg_{uuid.uuid4().hex[:20]}"
            out.append(json.dumps(record))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def _codex_session(sessions: Path, cwd: str, session: str, repeats: int, at: dt.datetime) -> None:
    lines = CODEX_FIXTURE.read_text(encoding="utf-8").splitlines()
    folder = sessions / at.strftime("%Y/%m/%d")
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for round_ in range(repeats):
        for n, line in enumerate(lines):
            record = json.loads(line)
            if record.get("type") == "session_meta":
                if round_:
                    continue
                record["payload"].update({"id": session, "session_id": session, "cwd": cwd})
                record["payload"]["runtime_workspace_roots"] = [cwd]
            record["timestamp"] = _stamp(at, round_ * 20 + n)
            out.append(json.dumps(record))
    name = f"rollout-{at.strftime('%Y-%m-%dT%H-%M-%S')}-{session}.jsonl"
    (folder / name).write_text("\n".join(out) + "\n", encoding="utf-8")


def make_sessions(home: Path, project: Path, other: Path, count: int, seed: int = 7) -> int:
    """`count` sessions of `project` and as many of `other` under `home`'s ~/.claude and ~/.codex; total bytes."""
    rng = random.Random(seed)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    for folder in (project, other):
        slug = re.sub(r"[^a-zA-Z0-9]", "-", str(folder))
        for index in range(count):
            at = start + dt.timedelta(hours=index * 3 + rng.random())
            session = str(uuid.UUID(int=rng.getrandbits(128)))
            repeats = rng.randint(1, 12)
            if rng.random() < 0.7:
                path = home / ".claude" / "projects" / slug / f"{session}.jsonl"
                _claude_session(path, str(folder), session, repeats, at)
            else:
                _codex_session(home / ".codex" / "sessions", str(folder), session, repeats, at)
    return sum(path.stat().st_size for path in home.rglob("*.jsonl"))


def _environment(work: Path, home: Path) -> dict[str, str]:
    bin_dir = work / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("claude", "codex"):
        script = bin_dir / name
        script.write_text(f"#!{sys.executable}\n" + STANDIN.read_text(encoding="utf-8"), encoding="utf-8")
        script.chmod(0o755)
    env = {
        **os.environ,
        "HOME": str(home),
        "ORCMEM_HOME": str(work / "orcmem"),
        "PATH": f"{bin_dir}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "STANDIN_PROMPTS": str(work / "prompts.txt"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH", "")])),
    }
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        env.pop(name, None)
    return env


def _orcmem(env: dict[str, str], cwd: Path, *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "orcmem", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=3600
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr)
    return time.perf_counter() - started, done.stdout


def run(count: int = 1000, distil: int = 20, samples: int = 3, work: Path | None = None) -> ImportResult:
    """Make the sessions, time `--dry-run` `samples` times, then distil `distil` runs and time the stand-in."""
    work = work or Path(tempfile.mkdtemp(prefix="orcmem-bench-import-"))
    home, project, other = work / "home", work / "project", work / "other"
    for folder in (home, project, other):
        folder.mkdir(parents=True, exist_ok=True)
    size = make_sessions(home, project, other, count)
    env = _environment(work, home)
    _orcmem(env, project, "memory", "on")
    dry: list[float] = []
    estimate: dict[str, object] = {}
    for _ in range(samples):
        took, out = _orcmem(env, project, "import", "sessions", "--dry-run", "--json")
        dry.append(took)
        estimate = json.loads(out)
    wall, out = _orcmem(env, project, "import", "sessions", "--yes", "--json", "--max-runs", str(distil))
    planned = json.loads(out)
    prompts = [p for p in Path(env["STANDIN_PROMPTS"]).read_text().split("\n\f\n") if p.strip()]
    floor = _standin_floor(env, prompts)
    shutil.rmtree(work, ignore_errors=True)
    return ImportResult(
        sessions=int(str(estimate["sessions"])),
        others=count,
        megabytes=size / 2**20,
        find_and_estimate=latency(dry),
        runs=len(prompts),
        # The import finds and estimates every session first: that share is the dry run's, timed above.
        per_run_s=max(wall - statistics.median(dry), 0.0) / max(len(prompts), 1),
        standin_s=floor,
        tokens_estimated=int(str(planned["tokens"])),
        tokens_sent=sum(len(p) for p in prompts) // 4,
    )


def _standin_floor(env: dict[str, str], prompts: list[str]) -> float:
    """The stand-in's own time per call, given the same prompts the import sent (its log set aside)."""
    floor_env = {**env, "STANDIN_PROMPTS": env["STANDIN_PROMPTS"] + ".floor"}
    argv = ["claude", "-p", "--model", "sonnet", "--output-format", "json", "--no-session-persistence"]
    started = time.perf_counter()
    for prompt in prompts:
        subprocess.run(argv, input=prompt, env=floor_env, capture_output=True, text=True, check=True, timeout=60)
    return (time.perf_counter() - started) / max(len(prompts), 1)


def main() -> None:
    """Print the figures."""
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    print("\n".join(render(run(count))))


def render(result: ImportResult) -> list[str]:
    """The report section."""
    ratio = result.per_run_s / result.standin_s if result.standin_s else float("nan")
    return [
        "## Importing past sessions",
        "",
        f"`orcmem import sessions` over {result.sessions:,} past sessions of one project ({result.megabytes:.0f} MiB "
        f"with the {result.others:,} sessions of another project it passes over), made from the real Claude Code and",
        "Codex transcripts in tests/fixtures/agents (seven in ten Claude Code's, each 1 to 12 rounds of its fixture).",
        "Each figure is a fresh `orcmem` process, startup included. `python -m bench.import_sessions`.",
        "",
        "| | p50 | p95 |",
        "|---|---:|---:|",
        f"| find and estimate every session (`--dry-run`, {result.find_and_estimate.samples} runs) "
        f"| {result.find_and_estimate.p50 / 1000:.2f} s | {result.find_and_estimate.p95 / 1000:.2f} s |",
        "",
        f"Distilling {result.runs} of them (`--yes --max-runs {result.runs}`; the dry run's time taken off the wall",
        "time) with the stand-in distiller",
        f"(tests/standin_agent.py as `claude` and `codex` on PATH): {result.per_run_s:.2f} s a run, against",
        f"{result.standin_s:.2f} s for the stand-in's own call on the same prompts (the floor): {ratio:.1f}x. The",
        "difference is orcmem's share: reading the session into the ledger, the digest, and saving the memories.",
        f"The estimate said {result.tokens_estimated:,} prompt tokens for those runs; the prompts sent held "
        f"{result.tokens_sent:,} (characters / 4).",
        "A real distiller takes seconds a call; the import makes one call a run, one run at a time.",
    ]


if __name__ == "__main__":
    main()
