"""The floor under candidates only meaning found: LoCoMo's questions asked of their own conversation (on topic:
recall must not drop) and of another conversation (off topic: the answer should be short or empty).

`python -m bench.floor [LOCOMO.json]` prints one row per floor; `python -m bench` puts them in docs/benchmarks.md.
"""

from __future__ import annotations

import functools
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import orcmem.service.search as search_part
from bench.locomo import open_locomo
from orcmem.models.constants import SEARCH_DEFAULT_LIMIT, SEARCH_MEANING_ONLY_MIN_SIMILARITY
from orcmem.retrieve.scoring import rank_candidates

FLOORS = (0.0, 0.1, 0.2, 0.25, 0.3, 0.35, 0.4)


@dataclass(frozen=True)
class FloorRow:
    """One floor's figures at the default search limit."""

    floor: float
    on_topic_recall: float  # share of questions with an answering memory among the results
    off_topic_results: float  # mean results for a question asked of another conversation
    off_topic_empty: float  # share of those answered with nothing


def run(path: Path, work: Path | None = None, floors: tuple[float, ...] = FLOORS) -> list[FloorRow]:
    """Search every question at each floor; restores the product's floor afterwards."""
    svc, questions = open_locomo(path, work or Path(tempfile.mkdtemp(prefix="orcmem-floor-")))
    projects = sorted({q.project.id: q.project for q in questions}.values(), key=lambda p: p.name)
    rows = []
    try:
        for floor in floors:
            # Search binds its ranking at import; the bench swaps in one with this floor (restored below).
            search_part.rank_candidates = functools.partial(rank_candidates, meaning_only_floor=floor)
            found = 0
            off_counts: list[int] = []
            for question in questions:
                hits = svc.search.hits(question.project, question.text, SEARCH_DEFAULT_LIMIT)
                found += any(hit.memory.id in question.evidence for hit in hits)
                other = projects[(projects.index(question.project) + 1) % len(projects)]
                off_counts.append(len(svc.search.hits(other, question.text, SEARCH_DEFAULT_LIMIT)))
            rows.append(
                FloorRow(
                    floor,
                    found / len(questions),
                    sum(off_counts) / len(off_counts),
                    sum(1 for n in off_counts if n == 0) / len(off_counts),
                )
            )
    finally:
        search_part.rank_candidates = rank_candidates
        svc.close()
    return rows


def main() -> None:
    """Print the table."""
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("../shared/data/locomo/locomo-dev.json")
    print("\n".join(render(run(path))))


def render(rows: list[FloorRow]) -> list[str]:
    """The report section."""
    chosen = next((row for row in rows if abs(row.floor - SEARCH_MEANING_ONLY_MIN_SIMILARITY) < 1e-9), None)
    lines = [
        "## Meaning-only floor",
        "",
        "A search candidate that only meaning found (no word of the query matched it) is kept only when its cosine",
        "similarity to the query reaches a floor. Measured on LoCoMo's questions at the default limit of 8: asked of",
        "their own conversation (on topic, recall@8 must not drop) and of the next conversation (off topic, the",
        "answer should be short). `python -m bench.floor`.",
        "",
        "| floor | on topic: recall@8 | off topic: results (of 8) | off topic: answered with nothing |",
        "|---:|---:|---:|---:|",
        *[
            f"| {row.floor:.2f} | {row.on_topic_recall:.3f} | {row.off_topic_results:.2f} | {row.off_topic_empty:.1%} |"
            for row in rows
        ],
        "",
    ]
    if chosen is not None:
        lines.append(
            f"orcmem uses {chosen.floor:.2f} (`SEARCH_MEANING_ONLY_MIN_SIMILARITY`): on topic "
            f"{chosen.on_topic_recall:.3f} against {rows[0].on_topic_recall:.3f} without a floor; off topic "
            f"{chosen.off_topic_results:.2f}"
            f" results against {rows[0].off_topic_results:.2f}."
        )
    return lines


if __name__ == "__main__":
    main()
