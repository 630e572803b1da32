"""Hook wall time (process start to exit) and ingest + digest of a 5,000-event transcript."""

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

from bench.common import Latency, latency, profile_with_memories
from orcmem.extract.digest import build_digest, render_digest
from orcmem.host.workspace import Location
from orcmem.ingest.transcript import parse_transcript
from orcmem.models import constants
from orcmem.models.constants import DB_FILENAME, SETTING_FLAG_VERSION
from orcmem.models.vocabulary import Agent
from orcmem.service.memory_service import MemoryService
from orcmem.store.facade import Store
from orcmem.text.instructions import FLAG_VERSION

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "fixtures" / "agents" / "claude_transcript_sample.jsonl"


@dataclass
class LearningResult:
    """Figures for the learning path."""

    python_bare: Latency
    hook_session_end: Latency
    hook_stop: Latency
    hook_prompt_10k: Latency
    hook_session_start_10k: Latency
    hook_pre_tool_use: Latency
    hook_prompt_injected: float  # share of the timed prompts that got memories back
    upgrade: Upgrade  # the first session-start hook after an upgrade of the instruction detector
    events: int
    transcript_bytes: int
    parse_ms: float
    store_ms: float
    digest_ms: float


@dataclass
class Upgrade:
    """The first `orcmem hook session-start` on 10,000 memories whose flags an older detector made, beside the floor
    measured right before each run, and how many memories each run re-flagged (on average)."""

    floor: Latency
    hook: Latency
    current: Latency  # the same hook right after, the flags made current: what it costs with no re-flag to do
    done: float
    memories: int

    @property
    def ratio(self) -> float:
        """The hook's p50 over the floor's."""
        return self.hook.p50 / self.floor.p50


def _record(kind: str, n: int, message: dict, **extra: object) -> dict:
    return {
        "type": kind,
        "uuid": f"u{n}",
        "parentUuid": f"u{n - 1}",
        "isSidechain": False,
        "sessionId": "bench",
        "timestamp": f"2026-11-01T10:{n // 3600 % 60:02d}:{n // 60 % 60:02d}.{n % 1000:03d}Z",
        "cwd": "/work/project",
        "message": message,
        **extra,
    }


def synthetic_transcript(target_events: int = 5000) -> bytes:
    """A Claude Code session of about `target_events` ledger events: prompts, tool calls, edits and answers."""
    lines: list[dict] = []
    n = 0
    while True:
        n += 1
        lines.append(_record("user", n, {"role": "user", "content": f"Step {n}: make the importer handle case {n}"}))
        for tool in range(3):
            n += 1
            call = f"toolu_{n}_{tool}"
            name, tool_input = (
                ("Edit", {"file_path": f"src/importer/part_{n % 40}.py", "old_string": "a", "new_string": "b"})
                if tool == 2
                else ("Bash", {"command": "pytest -q"})
            )
            lines.append(
                _record(
                    "assistant",
                    n,
                    {
                        "id": f"msg_{n}",
                        "role": "assistant",
                        "model": "claude-sonnet-5",
                        "content": [{"type": "tool_use", "id": call, "name": name, "input": tool_input}],
                    },
                )
            )
            n += 1
            output = f"{'FAILED' if n % 7 == 0 else 'passed'} tests/test_importer.py::test_case_{n} " + "." * 200
            lines.append(
                _record(
                    "user",
                    n,
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": call, "content": output, "is_error": n % 7 == 0}
                        ],
                    },
                )
            )
        n += 1
        lines.append(
            _record(
                "assistant",
                n,
                {
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "model": "claude-sonnet-5",
                    "content": [{"type": "text", "text": f"Case {n} is handled now."}],
                },
            )
        )
        # each round: 1 prompt + 3 starts + 3 results + 1 file change + 1 answer = 9 events
        if (len(lines) // 8) * 9 >= target_events:
            break
    return ("\n".join(json.dumps(line) for line in lines) + "\n").encode()


def _wall(command: list[str], stdin: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, check=False, timeout=60)
    return time.perf_counter() - started


def _hooks_at_10k(work: Path, orcmem: str, samples: int) -> tuple[list[float], list[float], list[float], float]:
    """`orcmem hook prompt` and `session-start` against a profile of 10,000 memories, and the floor beside them.

    Each prompt run is paired with a `python -c pass` run right before it, so the ratio is not skewed by the
    machine getting busier or quieter during the run. Returns (floor, prompt, session-start, share injected).
    """
    from bench.common import queries

    home = work / "home-10k"
    project = work / "project-10k"
    profile_with_memories(home, project, 10_000)
    env = {**os.environ, "ORCMEM_HOME": str(home)}
    start_payload = json.dumps({"session_id": "bench", "cwd": str(project), "hook_event_name": "SessionStart"})
    for _ in range(3):  # the first runs read the database from disk into the page cache
        _wall([orcmem, "hook", "session-start"], start_payload, env)
    floor, times, starts, hits = [], [], [], 0
    for number, text in enumerate(queries(samples)):
        payload = json.dumps(
            {
                "session_id": f"bench-{number}",  # a session each: one session is never given a memory twice
                "cwd": str(project),
                "prompt": text,
                "hook_event_name": "UserPromptSubmit",
                "permission_mode": "default",
            }
        )
        floor.append(_wall([sys.executable, "-c", "pass"], "", env))
        started = time.perf_counter()
        result = subprocess.run([orcmem, "hook", "prompt"], input=payload, capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - started)
        hits += bool(result.stdout)
    for _ in range(max(10, samples // 3)):
        starts.append(_wall([orcmem, "hook", "session-start"], start_payload, env))
    return floor, times, starts, hits / samples


def first_hook_after_upgrade(home: Path, project: Path, orcmem: str, samples: int = 5, size: int = 10_000) -> Upgrade:
    """Before each run, the flags of the `size` memories are made an older detector's again (no re-flag begun), as
    after an upgrade.

    Written against the store alone, so that an older checkout (which re-flagged every memory at open) is measured by
    the same code: `PYTHONPATH=<checkout>/src:. python -m bench.learning upgrade`.
    """
    cursor_key = getattr(constants, "SETTING_FLAG_CURSOR", None)
    env = {**os.environ, "ORCMEM_HOME": str(home)}
    payload = json.dumps({"session_id": "bench-upgrade", "cwd": str(project), "hook_event_name": "SessionStart"})
    floor, times, current, done = [], [], [], []
    for _ in range(samples):
        store = Store.open(home / DB_FILENAME, vectors=False)
        store.settings.set(SETTING_FLAG_VERSION, "0")
        if cursor_key is not None:
            store.settings.delete(cursor_key)
        store.close()
        floor.append(_wall([sys.executable, "-c", "pass"], "", env))
        times.append(_wall([orcmem, "hook", "session-start"], payload, env))
        store = Store.open(home / DB_FILENAME, vectors=False)
        if store.settings.get(SETTING_FLAG_VERSION) != "0":
            done.append(size)  # the whole re-flag, in the hook
        else:  # the cursor's last pk: the memories' pks run from 1 without gaps here
            done.append(int((store.settings.get(cursor_key or "") or "0:0:0").split(":")[1]))
        store.settings.set(SETTING_FLAG_VERSION, str(FLAG_VERSION))
        store.close()
        current.append(_wall([orcmem, "hook", "session-start"], payload, env))
    return Upgrade(latency(floor), latency(times), latency(current), sum(done) / len(done), size)


def run(samples: int = 30) -> LearningResult:
    """Measure the hooks as agents run them, and the ingest and digest path."""
    work = Path(tempfile.mkdtemp(prefix="orcmem-bench-learning-"))
    home = work / "home"
    project = work / "project"
    project.mkdir()
    svc = MemoryService.open(home, vectors=False)
    svc.settings.set_enabled(True)
    svc.close()
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"
    env = {**os.environ, "ORCMEM_HOME": str(home)}
    ends, stops, tools = [], [], []
    for i in range(samples):
        transcript = project / f"session-{i}.jsonl"
        shutil.copy(SAMPLE, transcript)
        payload = {"session_id": f"bench-{i}", "transcript_path": str(transcript), "cwd": str(project)}
        stops.append(_wall([orcmem, "hook", "stop"], json.dumps({**payload, "hook_event_name": "Stop"}), env))
        ends.append(
            _wall([orcmem, "hook", "session-end"], json.dumps({**payload, "hook_event_name": "SessionEnd"}), env)
        )
        tool_call = {
            **payload,
            "hook_event_name": "PreToolUse",
            "permission_mode": "acceptEdits",
            "tool_name": "mcp__orcmem__memory_record",
            "tool_input": {"type": "lesson", "title": f"Lesson {i}", "body": "Run the tests with -p no:cacheprovider."},
        }
        tools.append(_wall([orcmem, "hook", "pre-tool-use"], json.dumps(tool_call), env))

    bare, prompt_times, start_times, injected = _hooks_at_10k(work, orcmem, samples * 2)
    upgrade = first_hook_after_upgrade(work / "home-10k", work / "project-10k", orcmem)

    data = synthetic_transcript()
    transcript = work / "big.jsonl"
    transcript.write_bytes(data)
    started = time.perf_counter()
    chunk = parse_transcript(transcript, 0, Agent.CLAUDE)
    parsed = time.perf_counter()
    svc = MemoryService.open(home, vectors=False)
    proj = svc.project(Location(str(project), str(project), "bench"))
    run_row = svc.store.runs.for_session(
        project_id=proj.id, agent="claude", session_id="big", transcript_path=None, cwd=None, now=svc.clock()
    )
    svc.store.runs.append(
        run_row.id,
        chunk.events,
        offset=chunk.end_offset,
        turns=chunk.turns,
        skipped=0,
        model=None,
        title=None,
        now=svc.clock(),
    )
    stored = time.perf_counter()
    render_digest(build_digest(svc.store.runs.events(run_row.id, newest=5000)))
    digested = time.perf_counter()
    svc.close()
    shutil.rmtree(work, ignore_errors=True)
    return LearningResult(
        python_bare=latency(bare),
        hook_session_end=latency(ends),
        hook_stop=latency(stops),
        hook_prompt_10k=latency(prompt_times),
        hook_session_start_10k=latency(start_times),
        hook_pre_tool_use=latency(tools),
        hook_prompt_injected=injected,
        upgrade=upgrade,
        events=len(chunk.events),
        transcript_bytes=len(data),
        parse_ms=(parsed - started) * 1000,
        store_ms=(stored - parsed) * 1000,
        digest_ms=(digested - stored) * 1000,
    )


def _upgrade_only(samples: int) -> None:
    """`python -m bench.learning upgrade [SAMPLES]`: the first hook after an upgrade alone, as a JSON line."""
    work = Path(tempfile.mkdtemp(prefix="orcmem-bench-upgrade-"))
    home, project = work / "home-10k", work / "project-10k"
    profile_with_memories(home, project, 10_000)
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"
    env = {**os.environ, "ORCMEM_HOME": str(home)}
    start = json.dumps({"session_id": "bench", "cwd": str(project), "hook_event_name": "SessionStart"})
    for _ in range(3):  # the page cache, as in the hooks' section
        _wall([orcmem, "hook", "session-start"], start, env)
    up = first_hook_after_upgrade(home, project, orcmem, samples)
    shutil.rmtree(work, ignore_errors=True)
    figures = {
        "floor_p50": up.floor.p50,
        "hook_p50": up.hook.p50,
        "ratio": up.ratio,
        "current_p50": up.current.p50,
        "current_ratio": up.current.p50 / up.floor.p50,
        "reflagged": up.done,
    }
    print(json.dumps({"samples": samples, **{key: round(value, 3) for key, value in figures.items()}}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["upgrade"]:
        _upgrade_only(int(sys.argv[2]) if len(sys.argv) > 2 else 5)
