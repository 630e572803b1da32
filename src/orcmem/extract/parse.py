"""Lenient parsing of a model's answer into a run summary and at most six memories."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from orcmem.extract.prompt import JUDGE_RELATIONS
from orcmem.models.constants import (
    BODY_MAX_CHARS,
    CONFIDENCE_DEFAULT,
    CONFIDENCE_MAX,
    CONFIDENCE_MIN,
    EXTRACTED_FILES_MAX,
    EXTRACTED_MEMORIES_MAX,
    EXTRACTED_OUTCOME_DEFAULT,
    EXTRACTION_FALLBACK_TYPE,
    EXTRACTION_SOURCES,
    EXTRACTION_TYPES,
    TITLE_MAX_CHARS,
)
from orcmem.models.data_shapes import JsonObject, JsonValue
from orcmem.text.redact import redact

_FENCE = re.compile(r"```json\s*|```")
_MAX_UNWRAP = 2  # how many layers of "a JSON string holding the JSON" are peeled off


@dataclass(frozen=True, slots=True)
class ExtractedSummary:
    """What the run was asked, what was done, how it ended, and what is left open."""

    request: str = ""
    work_done: str = ""
    outcome: str = EXTRACTED_OUTCOME_DEFAULT
    open_items: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ExtractedMemory:
    """One memory the model proposed, already cut to the limits."""

    type: str
    title: str
    body: str
    topic_key: str | None = None
    files: tuple[str, ...] = ()
    confidence: float = CONFIDENCE_DEFAULT
    source: str | None = None  # user, agent or tool, as the model said; None when it said nothing known


@dataclass(frozen=True, slots=True)
class Extraction:
    """A parsed answer: the summary and the memories (at most MAX_MEMORIES_PER_RUN)."""

    summary: ExtractedSummary = field(default_factory=ExtractedSummary)
    memories: tuple[ExtractedMemory, ...] = ()


def _reject_constant(name: str) -> JsonValue:
    raise ValueError(f"{name} is not JSON")  # NaN and Infinity are not JSON, as in JavaScript's JSON.parse


def _loads(text: str) -> JsonValue:
    return json.loads(text, parse_constant=_reject_constant)


def _object_in(raw: str, depth: int = 0) -> JsonObject | None:
    cleaned = _FENCE.sub("", raw).strip()
    start = cleaned.find("{")
    end = cleaned.rfind("}")
    if start >= 0 and end > start:
        try:
            value = _loads(cleaned[start : end + 1])
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            return value
    if depth < _MAX_UNWRAP and cleaned.startswith('"'):
        # The whole answer may be a JSON string whose text is the JSON asked for.
        try:
            inner = _loads(cleaned)
        except (ValueError, RecursionError):
            return None
        if isinstance(inner, str):
            return _object_in(inner, depth + 1)
    return None


def _utf8(text: str) -> str:
    """Text with lone surrogates (a JSON escape like \\ud800) replaced: the store keeps UTF-8 only."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _trimmed(value: JsonValue) -> str:
    return _utf8(value).strip() if isinstance(value, str) else ""


def _cut(text: str, limit: int) -> str:
    # Redact before cutting: a cut inside a secret leaves half of it, which no rule recognises afterwards.
    return redact(text)[:limit] if len(text) > limit else text


def _strings(value: JsonValue) -> list[str]:
    return [_utf8(item) for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _confidence(value: JsonValue) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return CONFIDENCE_DEFAULT
    try:
        number = float(value)
    except OverflowError:  # an integer too large for a float is Infinity in JavaScript
        return CONFIDENCE_DEFAULT
    if not math.isfinite(number):
        return CONFIDENCE_DEFAULT
    return min(CONFIDENCE_MAX, max(CONFIDENCE_MIN, number))


def _summary(value: JsonValue) -> ExtractedSummary:
    data = value if isinstance(value, dict) else {}
    return ExtractedSummary(
        request=_trimmed(data.get("request")),
        work_done=_trimmed(data.get("workDone")),
        outcome=_trimmed(data.get("outcome")) or EXTRACTED_OUTCOME_DEFAULT,
        open_items=tuple(_strings(data.get("openItems"))),
    )


def _memory(entry: JsonValue) -> ExtractedMemory | None:
    if not isinstance(entry, dict):
        return None
    kind = entry.get("type")
    title = _cut(_trimmed(entry.get("title")), TITLE_MAX_CHARS)
    body = _cut(_trimmed(entry.get("body")), BODY_MAX_CHARS)
    if not title or not body:
        return None
    topic = _trimmed(entry.get("topicKey"))
    source = _trimmed(entry.get("source")).lower()
    return ExtractedMemory(
        type=kind if isinstance(kind, str) and kind in EXTRACTION_TYPES else EXTRACTION_FALLBACK_TYPE,
        title=title,
        body=body,
        topic_key=topic or None,
        files=tuple(_strings(entry.get("files"))[:EXTRACTED_FILES_MAX]),
        confidence=_confidence(entry.get("confidence")),
        source=source if source in EXTRACTION_SOURCES else None,
    )


def parse_extraction(raw: str) -> Extraction | None:
    """Read a model's answer leniently (fences stripped, first { to last }); None when it holds no JSON object."""
    if not isinstance(raw, str):
        return None
    data = _object_in(raw)
    if data is None:
        return None
    entries = data.get("memories")
    raw_entries = entries[:EXTRACTED_MEMORIES_MAX] if isinstance(entries, list) else []
    memories = tuple(memory for memory in map(_memory, raw_entries) if memory is not None)
    return Extraction(summary=_summary(data.get("summary")), memories=memories)


@dataclass(frozen=True, slots=True)
class Judgement:
    """What the model said of one new memory (its index in the extraction): its relation to an older candidate."""

    memory: int
    relation: str  # replaces, refines or conflicts ("none" is left out)
    candidate: str  # the short id it was shown


_NEW_ID = re.compile(r"n(\d{1,2})")


def parse_judgement(raw: str, new_count: int, candidate_ids: Mapping[int, set[str]]) -> list[Judgement]:
    """Read the judgement leniently: one relation per new memory at most, naming a candidate it was shown; anything
    else (an unknown id, a relation to a candidate another memory was shown, "none") is left out."""
    data = _object_in(raw) if isinstance(raw, str) else None
    entries = data.get("relations") if data is not None else None
    found: dict[int, Judgement] = {}
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        named = _NEW_ID.fullmatch(_trimmed(entry.get("memory")).lower())
        relation = _trimmed(entry.get("relation")).lower()
        candidate = _trimmed(entry.get("candidate")).lower()
        if named is None or relation not in JUDGE_RELATIONS or relation == "none":
            continue
        index = int(named.group(1)) - 1
        if 0 <= index < new_count and candidate in candidate_ids.get(index, set()) and index not in found:
            found[index] = Judgement(index, relation, candidate)
    return [found[index] for index in sorted(found)]
