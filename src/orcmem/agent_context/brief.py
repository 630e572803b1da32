"""The project brief a session starts with (docs/agents.md says what it holds and in which order)."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

from orcmem.agent_context.recall import (
    FLAG_NOTE,
    age_label,
    defang,
    fence,
    label,
    provenance_note,
    replaced_note,
    source_label,
    stale_note,
)
from orcmem.models.constants import (
    BRIEF_HALF_LIFE_DAYS,
    BRIEF_MAX_CHARS,
    BRIEF_OPEN_ITEMS,
    BRIEF_SECTIONS,
    BRIEF_TASKS,
    MS_PER_DAY,
)
from orcmem.models.types import Memory
from orcmem.text.duplicates import same_text_key

BRIEF_TITLE = "# Project memory"
BRIEF_INTRO = (
    "Durable facts from earlier runs on this project. Trust but verify. Each line starts with orcmem's own label in "
    'brackets (age, who saved it, "from tool output" when a tool, file or web page gave its words); all that '
    "follows the label is the memory's own text."
)
USING_MEMORY = (
    "Before changing an unfamiliar area, call task_context or memory_search. After a failed approach, call "
    "memory_record with type=lesson so the next run does not repeat it."
)


def _weight(memory: Memory, now: int) -> float:
    days = max(0.0, (now - memory.last_confirmed_at) / MS_PER_DAY)
    return memory.confidence * math.pow(0.5, days / BRIEF_HALF_LIFE_DAYS)


def build_brief(
    memories: Sequence[Memory],
    open_tasks: Sequence[str],
    open_items: Sequence[str],
    now: int,
    person: str | Collection[str] | None = None,
    max_chars: int = BRIEF_MAX_CHARS,
    replaced: Mapping[str, str] | None = None,
) -> str:
    """The brief from the newest active memories, the tasks in progress or review, and recent open items; a
    teammate's memory (not `person`'s) names its author; a memory in `replaced` (its id: what it replaced, as
    `store.recall.REPLACED` words it) says what it replaced and when.

    Returns "" when there is no memory to brief. At most `max_chars` characters, then a line with an ellipsis (a
    session's context budget may allow fewer than BRIEF_MAX_CHARS); "" when not even the title fits.
    """
    if not memories:
        return ""
    lines = [BRIEF_TITLE, BRIEF_INTRO]
    for memory_type, heading, cap in BRIEF_SECTIONS:
        group = sorted((m for m in memories if str(m.type) == memory_type), key=lambda m: -_weight(m, now))[:cap]
        if not group:
            continue
        lines += ["", f"## {heading}"]
        for memory in group:
            source = source_label(str(memory.source), memory.author, memory.author_agent, person)
            note = FLAG_NOTE.removeprefix(" · ") if memory.flagged else ""  # as in recall: marked as data
            said = provenance_note(str(memory.provenance))
            tag = label(age_label(memory.last_confirmed_at, now), source, said, stale_note(memory.stale_reason), note)
            history = replaced_note((replaced or {}).get(memory.id))
            after = f" ({defang(history)})" if history else ""
            lines.append(f"- {tag} {defang(memory.title)}: {defang(memory.body)}{after}")
    tasks = _distinct(open_tasks)[:BRIEF_TASKS]
    items = _distinct(open_items)[:BRIEF_OPEN_ITEMS]
    if tasks or items:
        lines += ["", "## Open threads"]
        lines += [f"- Task in progress: {defang(title)}" for title in tasks]
        lines += [f"- Left open last time: {defang(item)}" for item in items]
    lines += ["", "## Using memory", USING_MEMORY]
    text = "\n".join(lines)
    limit = min(max_chars, BRIEF_MAX_CHARS)
    if len(text) > limit:
        if limit < len(BRIEF_TITLE) + len(BRIEF_INTRO) + 3:
            return ""
        text = text[:limit] + "\n…"
    return text


def _distinct(lines: Sequence[str]) -> list[str]:
    """Each line once, on one line: the same item left open by several runs (or passes) is listed once."""
    seen: dict[str, str] = {}
    for line in lines:
        flat = " ".join(line.split())
        if flat:
            seen.setdefault(same_text_key(flat, ""), flat)
    return list(seen.values())


def fenced_brief(text: str) -> str:
    """The brief as reference material for a SessionStart hook ("" stays "")."""
    return fence("brief", [text]) if text else ""
