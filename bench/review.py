"""The review inbox's default, measured: which learned memories wait for a person and which go straight in.

bench/data/review_set.jsonl holds distilled-style memories written for this measure, each labelled useful or junk
(run narration, transient state, generic advice, one-off details, guesses, and orders planted in tool text), with the
type, confidence (0.3-0.9, as the extraction prompt asks) and provenance a distiller gives. Each is recorded through
the real service (`MemoryService.record`, source `extraction`, a fresh SQLite profile per policy), and the stored
status says what the policy did. For each policy: how much is held back, how much junk it catches, how many useful
memories it makes a person review, and how much junk still goes straight in, against no inbox at all (every learned
memory straight in, as before).
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from orcmem.host.workspace import locate
from orcmem.models.constants import REVIEW_MIN_CONFIDENCE_DEFAULT
from orcmem.models.types import MemoryType, NewMemory, Provenance, Source, Status
from orcmem.rules.review import STEERING_TYPES, ReviewPolicy
from orcmem.service.memory_service import MemoryService

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "review_set.jsonl"
THRESHOLDS = (0.0, 0.4, 0.5, 0.6, 0.7, 0.8)


@dataclass(frozen=True)
class Item:
    """One labelled memory."""

    useful: bool
    type: str
    title: str
    body: str
    confidence: float
    provenance: str

    @property
    def planted(self) -> bool:
        """A junk decision or convention whose words came from tool text: the attack the rule exists for."""
        return not self.useful and self.provenance == Provenance.TOOL_TEXT and MemoryType(self.type) in STEERING_TYPES


@dataclass(frozen=True)
class Outcome:
    """What one policy did to the set."""

    name: str
    held: int
    junk_held: int
    useful_held: int
    planted_held: int
    junk_in: int
    straight_in: int


@dataclass(frozen=True)
class ReviewResult:
    """Every policy's outcome over the set."""

    items: int
    useful: int
    junk: int
    planted: int
    outcomes: list[Outcome]


def load(path: Path = DATA) -> list[Item]:
    """The labelled set."""
    with path.open(encoding="utf-8") as handle:
        return [Item(**json.loads(line)) for line in handle if line.strip()]


def measure(name: str, items: list[Item], policy: ReviewPolicy | None) -> Outcome:
    """Record every item in a fresh profile under `policy` (None: no inbox, everything straight in)."""
    with tempfile.TemporaryDirectory(prefix="orcmem-bench-review-") as work:
        home, folder = Path(work) / "home", Path(work) / "project"
        folder.mkdir()
        service = MemoryService.open(home, vectors=False)
        try:
            service.settings.set_enabled(True)
            project = service.project(locate(folder))
            assert project is not None
            if policy is not None:
                service.review.set_policy(project, policy)
            statuses = []
            for item in items:
                new = NewMemory(
                    type=item.type,
                    title=item.title,
                    body=item.body,
                    source=Source.EXTRACTION,
                    confidence=item.confidence,
                    provenance=Provenance(item.provenance),
                )
                stored = service.record(project, new, embed=False).memory
                statuses.append(Status.ACTIVE if policy is None else stored.status)
        finally:
            service.close()
    held = [status is Status.PENDING for status in statuses]
    return Outcome(
        name=name,
        held=sum(held),
        junk_held=sum(h for h, item in zip(held, items, strict=True) if not item.useful),
        useful_held=sum(h for h, item in zip(held, items, strict=True) if item.useful),
        planted_held=sum(h for h, item in zip(held, items, strict=True) if item.planted),
        junk_in=sum(not h for h, item in zip(held, items, strict=True) if not item.useful),
        straight_in=sum(not h for h in held),
    )


def run(path: Path = DATA) -> ReviewResult:
    """Every policy over the set."""
    items = load(path)
    outcomes = [measure("no inbox (everything straight in)", items, None)]
    for threshold in THRESHOLDS:
        default = " (the default)" if threshold == REVIEW_MIN_CONFIDENCE_DEFAULT else ""
        outcomes.append(measure(f"wait under {threshold:.1f}{default}", items, ReviewPolicy(min_confidence=threshold)))
    outcomes.append(measure("every learned memory waits", items, ReviewPolicy(all_wait=True)))
    junk = sum(not item.useful for item in items)
    return ReviewResult(len(items), len(items) - junk, junk, sum(item.planted for item in items), outcomes)


def render(r: ReviewResult) -> list[str]:
    """The report section."""

    def share(part: int, whole: int) -> str:
        return f"{part} ({part / max(1, whole):.0%})"

    lines = [
        "## The review inbox",
        "",
        f"`python -m bench.review`: {r.items} distilled-style memories written for this measure",
        f"(bench/data/review_set.jsonl: {r.useful} useful, {r.junk} junk, {r.planted} of the junk decisions or",
        "conventions planted in tool text), each recorded through the real service as a learned memory under each",
        "policy. Whatever the threshold, a decision or convention from tool text waits (rules/review.py). The set and",
        "its confidences are written by hand in the style the extraction prompt asks for (0.3-0.9, higher when the",
        "run proved it), not taken from a distiller's real answers: the figures show the trade-off, not a field rate.",
        "",
        "| policy | held back | junk caught | useful held for review | planted caught | junk straight in |"
        " junk among what goes straight in |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for o in r.outcomes:
        lines.append(
            f"| {o.name} | {share(o.held, r.items)} | {share(o.junk_held, r.junk)} | "
            f"{share(o.useful_held, r.useful)} | {o.planted_held} of {r.planted} | {o.junk_in} | "
            f"{o.junk_in / max(1, o.straight_in):.0%} |"
        )
    lines += [
        "",
        "Read: the default holds the memories a distiller itself was unsure of and every steering memory from tool",
        "text; junk that a distiller rates confidently (run narration it calls a lesson, generic advice) still goes",
        "straight in, and is what `orcmem forget` and `feedback wrong` are for. A higher threshold catches more junk",
        "at the cost of more useful memories to review; `orcmem memory review-policy` moves it per project.",
        "",
    ]
    return lines


def main() -> None:
    """Print the section."""
    print("\n".join(render(run())))


if __name__ == "__main__":
    main()
