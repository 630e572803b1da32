"""orcmem's backup format: JSON Lines, a header line, then one line per project and one per memory with its files,
citations and freshness (docs/importing.md, Backup). Reading checks every line as a write would, so a damaged file
is refused with its line number before anything is written."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from orcmem.models.constants import BACKUP_FORMAT, BACKUP_VERSION
from orcmem.models.data_shapes import JsonObject, JsonValue
from orcmem.models.errors import ValidationError
from orcmem.models.types import Memory, Project
from orcmem.rules import memory as rules
from orcmem.store.imports import CitationRow, FreshnessRow

CITATION_KINDS = ("file", "program", "none")
# A memory's stored fields, in the order a backup line holds them (its freshness is apart, below the memory).
MEMORY_FIELDS = tuple(name for name in Memory.__dataclass_fields__ if name != "stale_reason")
FRESHNESS_STATES = ("fresh", "stale")


@dataclass(frozen=True, slots=True)
class BackedUpMemory:
    """A memory as a backup holds it, with its citations and freshness."""

    memory: Memory
    citations: tuple[CitationRow, ...] = ()
    freshness: FreshnessRow | None = None


@dataclass
class Backup:
    """What a backup file holds."""

    schema: int
    projects: list[Project] = field(default_factory=list)
    memories: list[BackedUpMemory] = field(default_factory=list)


def header_line(schema: int, now: int) -> str:
    """The first line: the format, its version, the schema it came from and when."""
    return json.dumps({"format": BACKUP_FORMAT, "version": BACKUP_VERSION, "schema": schema, "exported_at": now})


def project_line(project: Project) -> str:
    """One project's line."""
    return json.dumps({"project": project.to_dict()}, ensure_ascii=False)


def memory_line(item: BackedUpMemory) -> str:
    """One memory's line: every stored field (its freshness apart from the memory), its citations, its freshness."""
    memory = item.memory
    # Field by field: `Memory.to_dict` (dataclasses.asdict copies deeply) was most of a backup's time.
    data = {name: getattr(memory, name) for name in MEMORY_FIELDS}
    data.update(scope=memory.scope.value, type=memory.type.value, status=memory.status.value)
    data.update(source=memory.source.value, provenance=memory.provenance.value, files=list(memory.files))
    return json.dumps(
        {
            "memory": data,
            "citations": [
                {
                    "kind": c.kind,
                    "target": c.target,
                    "blob": c.blob,
                    "symbols": c.symbols,
                    "commit": c.commit_id,
                    "at": c.at,
                }
                for c in item.citations
            ],
            "freshness": None
            if item.freshness is None
            else {
                "state": item.freshness.state,
                "reason": item.freshness.reason,
                "since": item.freshness.since,
                "checked_at": item.freshness.checked_at,
            },
        },
        ensure_ascii=False,
    )


def read_backup(lines: Iterable[str]) -> Backup:
    """Every project and memory of a backup, each checked.

    Raises:
        ValidationError: the first line is no orcmem backup header, or a line is not what the format says (its
            number is in the message).
    """
    numbered: Iterator[tuple[int, str]] = ((n, line) for n, line in enumerate(lines, start=1) if line.strip())
    first = next(numbered, None)
    if first is None:
        raise ValidationError("The file is empty: no orcmem backup.")
    header = _object(first)
    if header.get("format") != BACKUP_FORMAT:
        raise ValidationError("This is no orcmem backup (its first line does not say `orcmem-backup`).")
    if header.get("version") != BACKUP_VERSION:
        raise ValidationError(f"This backup is version {header.get('version')}; this orcmem reads {BACKUP_VERSION}.")
    backup = Backup(schema=_int(header, "schema", first[0]))
    for number, line in numbered:
        data = _object((number, line))
        try:
            if "project" in data:
                backup.projects.append(_project(data["project"]))
            elif "memory" in data:
                backup.memories.append(_memory(data))
            else:
                raise ValidationError("it is neither a project nor a memory")
        except ValidationError as exc:
            raise ValidationError(f"Line {number} of the backup: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise ValidationError(f"Line {number} of the backup: a field is missing or wrong ({exc}).") from None
    return backup


def _object(numbered: tuple[int, str]) -> JsonObject:
    number, line = numbered
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValidationError(f"Line {number} of the backup is not JSON ({exc.msg}).") from None
    if not isinstance(data, dict):
        raise ValidationError(f"Line {number} of the backup is not a JSON object.")
    return data


def _int(data: JsonObject, name: str, number: int | None = None) -> int:
    value = data.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        where = f"Line {number} of the backup: " if number else ""
        raise ValidationError(f"{where}{name} must be a whole number")
    return value


def _text_or_none(data: JsonObject, name: str) -> str | None:
    value = data.get(name)
    if value is not None and not isinstance(value, str):
        raise ValidationError(f"{name} must be text")
    return value


def _project(data: JsonValue) -> Project:
    if not isinstance(data, dict):
        raise ValidationError("the project is not an object")
    names = ("id", "canonical_root", "root_path", "name")
    if not all(isinstance(data.get(name), str) and data[name] for name in names):
        raise ValidationError("a project needs an id, canonical_root, root_path and name")
    return Project(
        data["id"],
        data["canonical_root"],
        data["root_path"],
        data["name"],
        _int(data, "created_at"),
        _int(data, "last_seen_at"),
    )


def _memory(line: JsonObject) -> BackedUpMemory:
    data = line["memory"]
    if not isinstance(data, dict):
        raise ValidationError("the memory is not an object")
    confidence = data.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 < confidence <= 1:
        raise ValidationError("confidence must be a number from 0.1 to 1")
    evidence = _int(data, "evidence_count")
    if evidence < 1:
        raise ValidationError("evidence_count must be at least 1")
    scope = rules.check_scope(data["scope"])
    project_id = _text_or_none(data, "project_id")
    if (scope.value == "global") != (project_id is None):
        raise ValidationError("a global memory has no project, a project memory has one")
    flagged = data.get("flagged", False)
    if not isinstance(flagged, bool):
        raise ValidationError("flagged must be true or false")
    memory = Memory(
        id=rules.check_memory_id(data["id"]),
        scope=scope,
        project_id=project_id,
        type=rules.check_type(data["type"]),
        topic_key=rules.check_topic_key(data.get("topic_key")),
        title=rules.check_title(data["title"]),
        body=rules.check_body(data["body"]),
        confidence=float(confidence),
        status=rules.check_status(data["status"]),
        source=rules.check_source(data["source"]),
        source_run_id=_text_or_none(data, "source_run_id"),
        source_task_id=_text_or_none(data, "source_task_id"),
        evidence_count=evidence,
        files=rules.check_files(_strings(data.get("files", []), "files")),
        created_at=_int(data, "created_at"),
        updated_at=_int(data, "updated_at"),
        last_confirmed_at=_int(data, "last_confirmed_at"),
        origin_root=_text_or_none(data, "origin_root"),
        flagged=flagged,
        author=_text_or_none(data, "author"),
        author_agent=_text_or_none(data, "author_agent"),
        provenance=rules.check_provenance(data["provenance"]),
    )
    citations = tuple(_citation(c) for c in line.get("citations") or [])
    fresh = line.get("freshness")
    freshness = None
    if fresh is not None:
        if not isinstance(fresh, dict) or fresh.get("state") not in FRESHNESS_STATES:
            raise ValidationError("freshness must be an object whose state is fresh or stale")
        freshness = FreshnessRow(
            fresh["state"], str(fresh.get("reason") or ""), _int(fresh, "since"), _int(fresh, "checked_at")
        )
    return BackedUpMemory(memory, citations, freshness)


def _strings(value: JsonValue, name: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValidationError(f"{name} must be a list of text")
    return value


def _citation(data: JsonValue) -> CitationRow:
    if not isinstance(data, dict) or data.get("kind") not in CITATION_KINDS or not isinstance(data.get("target"), str):
        raise ValidationError("a citation needs a kind (file, program or none) and a target")
    return CitationRow(
        data["kind"],
        data["target"],
        _text_or_none(data, "blob"),
        _strings(data.get("symbols", []), "symbols"),
        _text_or_none(data, "commit"),
        _int(data, "at"),
    )
