"""How memories show as text: one line each, ages, origins, search hits (the commands, and the warm server's answer
to `orcmem search`, which prints what the command would)."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import asdict
from typing import Any

from orcmem.agent_context.recall import age_label, is_own, source_label
from orcmem.models.data_shapes import JsonObject
from orcmem.models.types import Memory, Provenance, Scope, SearchHit, Status
from orcmem.rules.freshness import possibly_stale
from orcmem.text.textsafe import printable

SNIPPET_CHARS = 100  # a search result's body, on one line under its title

SOURCE_LABELS = {
    "user": "from you",
    "agent": "saved by an agent",
    "extraction": "from a run summary",
    "tool": "saved by a tool",
}  # the CLI speaks to the user ("from you"); recall and the brief speak to agents


def age_text(ms: int, now: int) -> str:
    """How long ago, in words."""
    return age_label(ms, now)


def memory_line(memory: Memory, now: int, person: str | Collection[str] | None = None) -> str:
    badge = "" if memory.status is Status.ACTIVE else f" [{memory.status}]"
    if possibly_stale(memory.status, memory.stale_reason):
        badge = " [possibly stale]"
    scope = " (global)" if memory.scope is Scope.GLOBAL else ""
    return (
        f"{memory.id}  {memory.type:<10} {memory.title}{badge}{scope}\n"
        f"    {origin(memory, person)}, {PROVENANCE_LABELS[memory.provenance]}, "
        f"updated {age_text(memory.updated_at, now)}, confidence {memory.confidence:.2f}"
    )


# Where a memory's words came from, as `list`, `show` and `search` say it (docs/security.md, Untrusted text).
PROVENANCE_LABELS = {
    Provenance.PERSON: "written by a person",
    Provenance.USER_WORDS: "from the user's words",
    Provenance.AGENT: "an agent's own words",
    Provenance.TOOL_TEXT: "from tool output",
    Provenance.TEAMMATE: "from a teammate",
}


def origin(memory: Memory, person: str | Collection[str] | None) -> str:
    """Who wrote it: "from you" for this profile's person (`person`: their id, or all their ids), else their id (a
    teammate's, through the team pool)."""
    if is_own(memory.author, person):
        return SOURCE_LABELS[str(memory.source)]
    return source_label(str(memory.source), memory.author, memory.author_agent, person)


def wanted(memory: Memory, provenances: tuple[str, ...]) -> bool:
    """Whether a memory passes a --provenance filter (none given: every memory does)."""
    return not provenances or str(memory.provenance) in provenances


def snippet(body: str) -> str:
    """The body on one line, cut to fit a terminal line."""
    text = printable(" ".join(body.split()))
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"


def hit_dict(hit: SearchHit) -> JsonObject:
    parts = hit.parts
    return {
        **hit.memory.to_dict(),
        "score": hit.score,
        "explain": {
            "word_rank": parts.word_rank,
            "meaning_rank": parts.meaning_rank,
            "fused": parts.fused,
            "type_weight": parts.type_weight,
            "confidence_factor": parts.confidence_factor,
            "recency_factor": parts.recency_factor,
            "word_score": parts.word_score,
            "similarity": parts.similarity,
        },
    }


def search_output(
    hits: Sequence[SearchHit],
    now: int,
    person: str | Collection[str] | None,
    *,
    explain: bool,
    on_team: bool,
    as_json: bool,
) -> str:
    """What `orcmem search` prints for its hits (the command and the warm server's answer to it print this)."""
    if as_json:
        # ASCII only: JSON escapes C0 controls by itself, and with this also C1 controls and bidi or invisible marks.
        return json.dumps([hit_dict(hit) for hit in hits], ensure_ascii=True, indent=2)
    if not hits:
        return "No matching memories."
    lines: list[str] = []
    for hit in hits:
        lines.append(memory_line(hit.memory, now, person))
        lines.append(f"    {snippet(hit.memory.body)}")
        if explain:
            lines.append(explain_line(hit, on_team))
    return printable("\n".join(lines))


def explain_line(hit: SearchHit, on_team: bool) -> str:
    """Each part of a hit's score, for `orcmem search --explain`."""
    p = hit.parts
    relevance = "relevance" if on_team else "BM25"
    words = f"words #{p.word_rank} ({relevance} {p.word_score:.3g})" if p.word_score is not None else "words -"
    meaning = f"meaning #{p.meaning_rank} (similarity {p.similarity:.2f})" if p.similarity is not None else "meaning -"
    return (
        f"    score {hit.score:.6f} = fused {p.fused:.6f} ({words}, {meaning}) × type {p.type_weight:.2f} "
        f"× confidence {p.confidence_factor:.3f} × recency {p.recency_factor:.3f}"
    )


def as_dict(value: Any) -> JsonObject:
    """A dataclass as a dict, for --json."""
    return asdict(value)
