"""claude-mem's observations into memories (thedotmack/claude-mem: each observation has a type, a title, a
narrative, facts, concepts and the files it read and changed). Its type and concepts give the memory type, its
facts join the narrative in the body, and its files become the memory's files, which orcmem cites and checks for
freshness. Its words were an agent's: provenance `agent`."""

from __future__ import annotations

import json
from collections.abc import Sequence

from orcmem.importing.items import ImportItem, body_text, item_key, shorten
from orcmem.models.constants import FILE_PATH_MAX_CHARS, FILES_MAX_COUNT, TITLE_MAX_CHARS
from orcmem.models.data_shapes import JsonObject, JsonValue
from orcmem.models.errors import ValidationError
from orcmem.models.types import MemoryType, Provenance, Source
from orcmem.models.vocabulary import ImportKind

# claude-mem's observation types (its mode file code.json) to memory types.
TYPES: dict[str, MemoryType] = {
    "decision": MemoryType.DECISION,
    "bugfix": MemoryType.LESSON,
    "discovery": MemoryType.FACT,
    "feature": MemoryType.FACT,
    "refactor": MemoryType.FACT,
    "change": MemoryType.FACT,
}
# claude-mem's concepts that say more than a fact does (a discovery, a feature, a change), tried in this order.
CONCEPTS: tuple[tuple[str, MemoryType], ...] = (
    ("problem-solution", MemoryType.LESSON),
    ("gotcha", MemoryType.ENV_QUIRK),
    ("trade-off", MemoryType.DECISION),
    ("pattern", MemoryType.CONVENTION),
)


def _list(value: JsonValue) -> list[str]:
    """A JSON array column (or an array in an export) as strings; anything else as no items."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return [value] if value.strip() else []
    return [str(item).strip() for item in value if str(item).strip()] if isinstance(value, list) else []


def observations_in_export(data: JsonValue) -> list[JsonObject]:
    """The observations of claude-mem's JSON export (scripts/export-memories.ts: an object whose `observations` is a
    list of rows), or of a bare list of rows.

    Raises:
        ValidationError: it is neither.
    """
    rows = data.get("observations") if isinstance(data, dict) else data
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise ValidationError("This is no claude-mem export: it holds no list of observations.")
    return rows


def projects_of(observations: Sequence[JsonObject]) -> dict[str, int]:
    """How many observations each claude-mem project holds."""
    counts: dict[str, int] = {}
    for row in observations:
        name = str(row.get("project") or "")
        counts[name] = counts.get(name, 0) + 1
    return counts


def claude_mem_items(observations: Sequence[JsonObject]) -> list[ImportItem]:
    """One memory for each observation with a title or a narrative."""
    items: list[ImportItem] = []
    for row in observations:
        title = str(row.get("title") or row.get("subtitle") or "").strip()
        narrative = str(row.get("narrative") or row.get("text") or "").strip()
        facts = _list(row.get("facts"))
        if not title and not narrative and not facts:
            continue
        concepts = [concept.lower() for concept in _list(row.get("concepts"))]
        kind = TYPES.get(str(row.get("type") or "").lower(), MemoryType.FACT)
        if kind is MemoryType.FACT:
            kind = next((found for concept, found in CONCEPTS if concept in concepts), kind)
        body = "\n".join([narrative, *(f"- {fact}" for fact in facts)]).strip()
        files = list(dict.fromkeys(_list(row.get("files_modified")) + _list(row.get("files_read"))))
        files = [path for path in files if len(path) <= FILE_PATH_MAX_CHARS][:FILES_MAX_COUNT]
        where = f"{row.get('memory_session_id') or ''}#{row.get('id') or ''}"
        items.append(
            ImportItem(
                key=item_key(ImportKind.CLAUDE_MEM.value, where, f"{title}\n{body}"),
                type=kind,
                title=shorten(title or body, TITLE_MAX_CHARS),
                body=body_text(body or title),
                source=Source.AGENT,
                provenance=Provenance.AGENT,
                origin=f"observation {row.get('id')}" + (f" ({row.get('project')})" if row.get("project") else ""),
                files=tuple(files),
            )
        )
    return items
