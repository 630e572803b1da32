"""Learning each thing once: the repeat rule on written pairs, repeats left after re-distillation, worker pick-up.

Three measurements:
- The repeat rule (orcmem/text/duplicates.py and the similarity threshold) on bench/data/duplicate_pairs.jsonl: pairs of
  coding memories that say the same thing in other words, and pairs that share words but differ in a fact. The
  false-merge rate (different lessons merged) and the missed-merge rate (one lesson kept twice) over a grid of
  thresholds, and a two-fold check: the threshold picked on one half, measured on the other.
- Repeats left in a growing session distilled three times by the real learning pipeline (real model), with a
  stand-in model that says again everything earlier passes said (as the observed bug did), once word for word and
  once reworded (the written pairs' other side).
- The time from `orcmem hook session-end` to a worker starting the run: with no worker running (the hook starts
  one) and with a worker lingering for another open session.
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

from bench.common import Latency, embedding_source, latency
from orcmem.models.constants import DUPLICATE_MIN_SIMILARITY
from orcmem.service.duplicates import memory_text
from orcmem.text.duplicates import differing_facts, same_text_key
from orcmem.worker.control import stop_workers

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "bench" / "data" / "duplicate_pairs.jsonl"
SAMPLE = ROOT / "tests" / "fixtures" / "agents" / "claude_transcript_sample.jsonl"
GRID = [round(0.60 + 0.02 * step, 2) for step in range(19)]
MAX_FALSE_MERGE = 0.02


@dataclass(frozen=True)
class Pair:
    """Two memories and whether they say the same thing, with what the repeat rule sees of them."""

    same: bool
    similarity: float
    same_words: bool
    differing: bool

    def merged(self, threshold: float) -> bool:
        """Whether orcmem would keep these as one memory at `threshold`."""
        return self.same_words or (self.similarity >= threshold and not self.differing)


@dataclass(frozen=True)
class Rates:
    """False-merge and missed-merge rates at one threshold."""

    threshold: float
    false_merge: float
    missed_merge: float


@dataclass(frozen=True)
class DuplicatesResult:
    """Everything this module measures."""

    positives: int
    negatives: int
    grid: list[Rates]
    chosen: Rates
    folds: list[tuple[float, Rates]]  # (threshold picked on the other half, rates on this half)
    sessions: int
    distinct: int
    left_verbatim: int
    left_reworded: int
    lost_reworded: int
    lost_verbatim: int
    pickup_spawned: Latency
    pickup_lingering: Latency


def load_pairs() -> list[dict]:
    """The written pairs."""
    return [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _text(side: dict) -> str:
    return memory_text(side["title"], side["body"])


def measure_pairs(embedder, rows: list[dict]) -> list[Pair]:
    """What the repeat rule sees of each pair, with the real model's cosine similarity."""
    import numpy as np

    texts = [_text(row[side]) for row in rows for side in ("a", "b")]
    vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
    pairs = []
    for index, row in enumerate(rows):
        a, b = row["a"], row["b"]
        pairs.append(
            Pair(
                same=bool(row["same"]),
                similarity=float(vectors[2 * index] @ vectors[2 * index + 1]),
                same_words=same_text_key(a["title"], a["body"]) == same_text_key(b["title"], b["body"]),
                differing=differing_facts(_text(a), _text(b)),
            )
        )
    return pairs


def rates(pairs: list[Pair], threshold: float) -> Rates:
    """The two error rates at one threshold."""
    positives = [p for p in pairs if p.same]
    negatives = [p for p in pairs if not p.same]
    false_merge = sum(p.merged(threshold) for p in negatives) / len(negatives)
    missed = sum(not p.merged(threshold) for p in positives) / len(positives)
    return Rates(threshold, false_merge, missed)


def pick(pairs: list[Pair]) -> float:
    """The lowest threshold of the grid whose false-merge rate is within MAX_FALSE_MERGE."""
    return next(t for t in GRID if rates(pairs, t).false_merge <= MAX_FALSE_MERGE)


# --- re-distillation -----------------------------------------------------------------------------------------------


class RepeatingModel:
    """A stand-in model that, at each pass, says again every lesson of the passes before and adds a new one."""

    def __init__(self, lessons: list[tuple[dict, dict]], reworded: bool) -> None:
        self.lessons = lessons
        self.reworded = reworded
        self.passes = 0

    def generate(self, prompt: str):
        from orcmem.extract.generator import GeneratorResult

        self.passes += 1
        said = []
        for index, (first, again) in enumerate(self.lessons[: self.passes + 1]):
            side = again if self.reworded and max(1, index) < self.passes else first  # said in an earlier pass
            said.append(
                {
                    "type": side.get("type", "lesson"),
                    "title": side["title"],
                    "body": side["body"],
                    "topicKey": None,
                    "files": [],
                    "confidence": 0.7,
                }
            )
        summary = {"request": "r", "workDone": f"pass {self.passes}", "outcome": "o", "openItems": []}
        return GeneratorResult.answer(json.dumps({"summary": summary, "memories": said}))


def _grow(transcript: Path, turn: int) -> None:
    """Add one answered turn to a Claude Code transcript."""
    lines = [
        {"type": "user", "uuid": f"u{turn}", "sessionId": "s", "message": {"role": "user", "content": f"step {turn}"}},
        {
            "type": "assistant",
            "uuid": f"a{turn}",
            "sessionId": "s",
            "message": {"id": f"m{turn}", "role": "assistant", "content": [{"type": "text", "text": f"done {turn}"}]},
        },
    ]
    with transcript.open("a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(line) + "\n" for line in lines)


def redistillation(rows: list[dict], sessions: int, reworded: bool, seed: int = 11) -> tuple[int, int, int]:
    """(memories beyond the distinct lessons, distinct lessons, lessons merged into another lesson's memory) over
    `sessions` sessions of three passes."""
    from orcmem.app.runtime import models_dir
    from orcmem.embed.model_files import ensure_model
    from orcmem.embed.worker import worker_embedder
    from orcmem.extract.resolve import GeneratorChoice
    from orcmem.host.workspace import Location
    from orcmem.service.learning import Learning
    from orcmem.service.memory_service import MemoryService

    positives = [(row["a"], row["b"]) for row in rows if row["same"]]
    chooser = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="orcmem-bench-repeats-"))
    source = embedding_source()
    ensure_model(models_dir(work), source)
    svc = MemoryService.open(work)
    svc.settings.set_enabled(True)
    svc.settings.set_embedding_model(source.pins.model_id)
    embedder = worker_embedder(models_dir(work), source)
    embedder.wait_ready(120)
    svc.use_embedder(embedder)
    learning = Learning(svc)
    left = distinct = lost = 0
    try:
        for session in range(sessions):
            folder = work / f"project-{session}"
            folder.mkdir()
            location = Location(str(folder), str(folder), folder.name)
            lessons = chooser.sample(positives, 4)
            model = RepeatingModel(lessons, reworded)
            transcript = folder / "session.jsonl"
            for turn in range(3):
                _grow(transcript, turn)
                run = learning.ingest(location, transcript, session_id=f"s{session}", ended=True).run
                learning.queue(run)
                job = learning.claim(os.getpid(), lambda pid: True)
                assert job is not None
                learning.run_job(job, lambda _run, m=model: GeneratorChoice(m, None, "stand-in"))
                svc.pump.wait(60)  # vectors of this pass, as a worker waits before it exits
            project = svc.project(location, create=False)
            titles = {memory.title for memory in svc.list(project)}
            left += len(titles) - len(lessons)
            distinct += len(lessons)
            lost += sum(first["title"] not in titles for first, _again in lessons)
    finally:
        svc.close()
        shutil.rmtree(work, ignore_errors=True)
    return left, distinct, lost


# --- worker pick-up ------------------------------------------------------------------------------------------------


def _hook(orcmem: str, name: str, payload: dict, env: dict[str, str]) -> None:
    command = [orcmem, "hook", name]
    subprocess.run(command, input=json.dumps(payload), text=True, env=env, check=True, timeout=60, capture_output=True)


def _started_at(home: Path, session: str, timeout: float = 30.0) -> float:
    """When the worker claimed the session's job (seconds since the epoch)."""
    from orcmem.service.memory_service import MemoryService

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        svc = MemoryService.open(home, vectors=False)
        try:
            for job, run in svc.store.jobs.list(None, 500):
                if run.session_id == session and job.started_at is not None:
                    return job.started_at / 1000
        finally:
            svc.close()
        time.sleep(0.02)
    raise RuntimeError(f"no worker started {session} within {timeout:.0f} s")


def pickup(samples: int) -> tuple[list[float], list[float]]:
    """Seconds from `orcmem hook session-end` starting to a worker claiming the run: spawned, and lingering."""
    from orcmem.service.memory_service import MemoryService

    work = Path(tempfile.mkdtemp(prefix="orcmem-bench-pickup-"))
    home, project = work / "home", work / "project"
    project.mkdir()
    svc = MemoryService.open(home, vectors=False)
    svc.settings.set_enabled(True)
    svc.close()
    orcmem = shutil.which("orcmem", path=str(Path(sys.executable).parent)) or "orcmem"
    env = {**os.environ, "ORCMEM_HOME": str(home), "PATH": str(Path(sys.executable).parent)}  # no agent CLI
    spawned: list[float] = []
    lingering: list[float] = []
    try:
        for index in range(samples):
            for mode, into in (("spawned", spawned), ("lingering", lingering)):
                if mode == "lingering":  # a session left open keeps a worker waiting for it to go idle
                    keeper = project / f"open-{index}.jsonl"
                    shutil.copy(SAMPLE, keeper)
                    open_session = {"session_id": f"open-{index}", "transcript_path": str(keeper), "cwd": str(project)}
                    _hook(orcmem, "stop", open_session, env)
                    time.sleep(1.0)  # the worker it started is asleep now
                else:
                    stop_workers(home)
                transcript = project / f"{mode}-{index}.jsonl"
                shutil.copy(SAMPLE, transcript)
                session = f"{mode}-{index}"
                payload = {"session_id": session, "transcript_path": str(transcript), "cwd": str(project)}
                began = time.time()
                _hook(orcmem, "session-end", payload, env)
                into.append(_started_at(home, session) - began)
    finally:
        stop_workers(home)
        shutil.rmtree(work, ignore_errors=True)
    return spawned, lingering


def run(sessions: int = 20, samples: int = 10) -> DuplicatesResult:
    """Measure the repeat rule, re-distillation and worker pick-up."""
    from orcmem.app.runtime import models_dir
    from orcmem.embed.model_files import ensure_model
    from orcmem.embed.worker import worker_embedder

    rows = load_pairs()
    work = Path(tempfile.mkdtemp(prefix="orcmem-bench-pairs-"))
    source = embedding_source()
    ensure_model(models_dir(work), source)
    embedder = worker_embedder(models_dir(work), source)
    embedder.wait_ready(120)
    try:
        pairs = measure_pairs(embedder, rows)
    finally:
        embedder.close()
        shutil.rmtree(work, ignore_errors=True)
    halves = [[p for i, p in enumerate(pairs) if i % 2 == k] for k in (0, 1)]
    folds = [(pick(halves[1 - k]), rates(halves[k], pick(halves[1 - k]))) for k in (0, 1)]
    left_verbatim, distinct, lost_verbatim = redistillation(rows, sessions, reworded=False)
    left_reworded, _distinct, lost_reworded = redistillation(rows, sessions, reworded=True)
    spawned, lingering = pickup(samples)
    return DuplicatesResult(
        positives=sum(p.same for p in pairs),
        negatives=sum(not p.same for p in pairs),
        grid=[rates(pairs, t) for t in GRID],
        chosen=rates(pairs, DUPLICATE_MIN_SIMILARITY),
        folds=folds,
        sessions=sessions,
        distinct=distinct,
        left_verbatim=left_verbatim,
        left_reworded=left_reworded,
        lost_reworded=lost_reworded,
        lost_verbatim=lost_verbatim,
        pickup_spawned=latency(spawned),
        pickup_lingering=latency(lingering),
    )


def render(r: DuplicatesResult) -> list[str]:
    """The report section."""
    met = lambda ok: "met" if ok else "**missed**"  # noqa: E731
    shown = [g for g in r.grid if 0.66 <= g.threshold <= 0.9]
    return [
        "## Learning each thing once",
        "",
        f"**The repeat rule** on `bench/data/duplicate_pairs.jsonl`: {r.positives} pairs of coding memories that say",
        f"the same thing in other words, and {r.negatives} that share words and tools but differ (another flag, port,",
        "version or path, or the opposite advice). Two memories are kept as one when their normalised words are the",
        "same, or when their cosine similarity (int8 MiniLM, title and body) reaches the threshold and nothing in them",
        "differs: a look-alike fact only one states, a negation on one side, a few words swapped, the same words",
        "reordered (`orcmem/text/duplicates.py`).",
        "",
        "| threshold | false merges (different lessons made one) | missed merges (one lesson kept twice) |",
        "|---:|---:|---:|",
        *[
            f"| {g.threshold:.2f}{' (used)' if abs(g.threshold - r.chosen.threshold) < 1e-9 else ''} | "
            f"{g.false_merge:.1%} | {g.missed_merge:.1%} |"
            for g in shown
        ],
        "",
        f"- Used: {r.chosen.threshold:.2f}, the lowest whose false-merge rate is within 2 %: "
        f"{met(r.chosen.false_merge <= MAX_FALSE_MERGE)} ({r.chosen.false_merge:.1%} false, "
        f"{r.chosen.missed_merge:.1%} missed).",
        "- Two-fold check (threshold picked on one half of the pairs, measured on the other): "
        + "; ".join(f"picked {t:.2f}, {f.false_merge:.1%} false / {f.missed_merge:.1%} missed" for t, f in r.folds)
        + ".",
        "- Without these checks, no threshold reaches 2 % false merges with fewer than 90 % missed: MiniLM puts",
        "  `port 5432` and `port 5433` within 0.98 of each other.",
        "",
        f"**Repeats left after re-distillation**: {r.sessions} growing sessions, each distilled three times by the",
        "real pipeline (ingest, incremental pass, save, real model for the vectors); at every pass the stand-in model",
        "says again every lesson of the passes before and adds one.",
        "",
        "| what the model repeats | lessons | memories beyond them | lessons merged into another's memory |",
        "|---|---:|---:|---:|",
        f"| the same words | {r.distinct} | {r.left_verbatim} | {r.lost_verbatim} |",
        f"| other words (each pair's other side) | {r.distinct} | {r.left_reworded} | {r.lost_reworded} |",
        "",
        f"- Target 0 for the same words: {met(r.left_verbatim == 0)}. Reworded repeats follow the missed-merge rate",
        "  above; a later pass is also told what the run already saved, which a real model uses to say nothing again.",
        "",
        "**From `orcmem hook session-end` to a worker starting the run** "
        f"({r.pickup_spawned.samples} sessions each), milliseconds p50 / p95:",
        "",
        "| | pick-up |",
        "|---|---:|",
        f"| no worker running (the hook starts one) | {r.pickup_spawned.cell()} |",
        f"| a worker lingering for another open session | {r.pickup_lingering.cell()} |",
        "",
        f"- Target p50 at most 1 s: {met(max(r.pickup_spawned.p50, r.pickup_lingering.p50) <= 1000)}.",
        "",
    ]


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.duplicates`: print this section alone."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.duplicates", description=__doc__)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--samples", type=int, default=10)
    args = parser.parse_args(argv)
    print("\n".join(render(run(args.sessions, args.samples))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
