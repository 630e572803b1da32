"""Contradiction candidates: is the memory a new one contradicts among the (at most 5) shown to the model?

bench/data/contradiction_pairs.jsonl holds 320 labelled pairs written in the style agents write memories: 80
contradicting ("use npm for installs" / "use pnpm, npm was removed"), 80 compatible (a detail that refines the older
one), 80 duplicate (the older one said again in other words) and 80 unrelated (another topic of another pair). The
80 older memories are planted in one project among 1,000 synthetic memories of the search benchmark's generator, all
embedded with the real model; each newer memory is then looked up exactly as a write looks it up
(`Contradictions.candidates`: words and meaning fused, under another topic key, at most 5). Reported per class: how
often the older memory is among the candidates, how many candidates are shown, and how often any is shown.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from bench.common import embedded_service
from bench.search import synthetic_memories
from orcmem.host.workspace import Location
from orcmem.models.constants import CONTRADICTION_MIN_SIMILARITY, CONTRADICTION_MIN_WORDS
from orcmem.models.types import NewMemory, Source
from orcmem.rules.contradictions import CANDIDATES_MAX
from orcmem.service.duplicates import memory_text
from orcmem.service.memory_service import MemoryService

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT / "bench" / "data" / "contradiction_pairs.jsonl"
OTHERS = 1000
CLASSES = ("contradicting", "compatible", "duplicate", "unrelated")
TARGET = 0.97


@dataclass(frozen=True)
class ClassResult:
    """One class of pairs: how many, how often the older memory was a candidate, candidates shown on average, and
    how often any candidate was shown."""

    label: str
    pairs: int
    found: float
    mean_shown: float
    any_shown: float


@dataclass(frozen=True)
class Result:
    """The whole run."""

    classes: list[ClassResult]
    others: int
    lookup_ms: float


def run(others: int = OTHERS) -> Result:
    """Plant every pair's older memory among `others` synthetic ones, look each newer one up, count."""
    pairs = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory(prefix="orcmem-contra-") as tmp:
        home, folder = Path(tmp) / "home", Path(tmp) / "project"
        folder.mkdir(parents=True)
        first = MemoryService.open(home, vectors=False)
        first.settings.set_enabled(True)
        first.close()
        svc = embedded_service(home)
        try:
            project = svc.project(Location(str(folder), str(folder), folder.name))
            assert project is not None
            with svc.store.db.transaction():
                for memory in synthetic_memories(others):
                    svc.record(project, memory, embed=False)
            planted: dict[str, str] = {}
            for pair in pairs:
                old = pair["old"]
                key = memory_text(old["title"], old["body"])
                if key not in planted:
                    new = NewMemory(old["type"], old["title"], old["body"], Source.USER)  # stored as written
                    planted[key] = svc.record(project, new, embed=False).memory.id
            svc.reindex()
            embedder = svc.embedder
            assert embedder is not None
            model = embedder.model_id
            texts = [memory_text(pair["new"]["title"], pair["new"]["body"]) for pair in pairs]
            vectors = embedder.embed_documents(texts)
            counts: dict[str, list[tuple[bool, int]]] = defaultdict(list)
            started = time.perf_counter()
            for pair, vector in zip(pairs, vectors, strict=True):
                new = pair["new"]
                found = svc.contradictions.candidates(project.id, new["title"], new["body"], None, vector, model)
                assert len(found) <= CANDIDATES_MAX
                old_id = planted[memory_text(pair["old"]["title"], pair["old"]["body"])]
                counts[pair["label"]].append((old_id in {m.id for m in found}, len(found)))
            lookup_ms = (time.perf_counter() - started) * 1000 / len(pairs)
        finally:
            svc.close()
    classes = [
        ClassResult(
            label,
            len(counts[label]),
            sum(hit for hit, _n in counts[label]) / len(counts[label]),
            sum(n for _hit, n in counts[label]) / len(counts[label]),
            sum(n > 0 for _hit, n in counts[label]) / len(counts[label]),
        )
        for label in CLASSES
    ]
    return Result(classes, others, lookup_ms)


def render(result: Result) -> list[str]:
    """The docs/benchmarks.md section."""
    contra = next(c for c in result.classes if c.label == "contradicting")
    verdict = "met" if contra.found >= TARGET else "NOT met"
    lines = [
        "## Contradiction candidates",
        "",
        f"`bench/contradictions.py` on `bench/data/contradiction_pairs.jsonl` ({sum(c.pairs for c in result.classes)} "
        f"labelled pairs): each pair's older memory planted in one project among {result.others:,} synthetic "
        "memories (and the other pairs' older memories), all embedded with the real MiniLM; each newer memory looked "
        f"up as a write looks it up (words sharing at least {CONTRADICTION_MIN_WORDS} distinct terms, meaning at "
        f"least {CONTRADICTION_MIN_SIMILARITY} cosine, fused by RRF, at most {CANDIDATES_MAX}).",
        "",
        "| pairs | n | older memory among the candidates | candidates shown (mean) | any candidate shown |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {c.label} | {c.pairs} | {c.found:.1%} | {c.mean_shown:.2f} | {c.any_shown:.1%} |" for c in result.classes
    ]
    lines += [
        "",
        f"Target: the contradicted memory among the candidates in at least {TARGET:.0%} of contradicting pairs: "
        f"{verdict} ({contra.found:.1%}). A lookup takes {result.lookup_ms:.1f} ms on average (words and the vector "
        "scan, the new memory's vector given). For unrelated pairs the older memory should not be shown (the first "
        "column is then the false-candidate rate); a candidate shown costs the judgement's second model call, which "
        "only runs when some new memory of a run has one.",
    ]
    return lines


if __name__ == "__main__":
    print("\n".join(render(run())))
