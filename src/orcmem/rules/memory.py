"""The rules a memory must satisfy before it is stored: ids, types, limits, confidence and files."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from enum import StrEnum
from functools import cache
from typing import TypeVar

from orcmem.models.constants import (
    BODY_MAX_CHARS,
    CONFIDENCE_DEFAULT,
    CONFIDENCE_MAX,
    CONFIDENCE_MIN,
    FILE_PATH_MAX_CHARS,
    FILES_MAX_COUNT,
    MEMORY_ID_PATTERN,
    TITLE_MAX_CHARS,
    TOPIC_KEY_MAX_CHARS,
)
from orcmem.models.errors import ValidationError
from orcmem.models.types import MemoryType, Provenance, Scope, Source, Status, Verdict
from orcmem.text.redact import redact

_MEMORY_ID = re.compile(MEMORY_ID_PATTERN)


def check_memory_id(value: str) -> str:
    """Accept only a public `mem_` id; rowids and anything else are refused."""
    candidate = value.strip()
    if not _MEMORY_ID.fullmatch(candidate):
        raise ValidationError(
            f"{_preview(value)!r} is not a memory id: ids look like mem_ followed by 32 lowercase hex characters."
        )
    return candidate


_E = TypeVar("_E", bound=StrEnum)


@cache
def _members(vocabulary: type[_E]) -> dict[str, _E]:
    """A vocabulary's members by value: a write checks three, and a walk over enum members costs a tenth of it."""
    return {member.value: member for member in vocabulary}


def _choice(kind: str, value: object, vocabulary: type[_E]) -> _E:
    """The member of `vocabulary` named by `value` (spaces and case ignored)."""
    member: _E | None = _members(vocabulary).get(str(value).strip().lower())
    if member is None:
        options = ", ".join(m.value for m in vocabulary)
        raise ValidationError(f"Unknown {kind} {_preview(str(value))!r}; choose one of: {options}.")
    return member


def check_type(value: str) -> MemoryType:
    """A known memory type."""
    return _choice("type", value, MemoryType)


def check_scope(value: str) -> Scope:
    """`project` or `global`."""
    return _choice("scope", value, Scope)


def check_source(value: str) -> Source:
    """A known source."""
    return _choice("source", value, Source)


def check_provenance(value: str) -> Provenance:
    """A known provenance."""
    return _choice("provenance", value, Provenance)


def check_status(value: str) -> Status:
    """A known status."""
    return _choice("status", value, Status)


def check_verdict(value: str) -> Verdict:
    """helpful, wrong or stale."""
    return _choice("verdict", value, Verdict)


def check_text(field: str, value: str, max_chars: int) -> str:
    """Trimmed text of 1..max_chars characters."""
    if not isinstance(value, str):
        raise ValidationError(f"The {field} must be text.")
    if not _is_utf8(value):
        raise ValidationError(
            f"The {field} holds bytes that are not UTF-8 text; check the terminal's or the file's encoding."
        )
    text = value.strip()
    if not text:
        raise ValidationError(f"The {field} is empty; it needs 1 to {max_chars} characters.")
    if len(text) > max_chars:
        raise ValidationError(f"The {field} has {len(text)} characters; the limit is {max_chars}.")
    return text


def check_title(value: str) -> str:
    """A title of 1 to TITLE_MAX_CHARS characters."""
    return check_text("title", value, TITLE_MAX_CHARS)


def check_body(value: str) -> str:
    """A body of 1 to BODY_MAX_CHARS characters."""
    return check_text("body", value, BODY_MAX_CHARS)


def check_topic_key(value: str | None) -> str | None:
    """A topic key of up to TOPIC_KEY_MAX_CHARS characters (secrets redacted, like the title and body), or None when
    blank."""
    if value is None or not str(value).strip():
        return None
    # Redacted after the check, then kept within the limit: a marker can be longer than the secret it replaced.
    # Lowercase: "Test/Pool" is the same topic as "test/pool", so an agent cannot shadow a key by its case.
    return redact(check_text("topic key", str(value), TOPIC_KEY_MAX_CHARS))[:TOPIC_KEY_MAX_CHARS].lower()


def clamp_confidence(value: float | None) -> float:
    """Confidence clamped to CONFIDENCE_MIN..CONFIDENCE_MAX; missing or not a finite number gives the default."""
    if value is None or isinstance(value, bool):
        return CONFIDENCE_DEFAULT
    try:
        number = float(value)
    except (TypeError, ValueError):
        return CONFIDENCE_DEFAULT
    if not math.isfinite(number):
        return CONFIDENCE_DEFAULT
    return round(min(CONFIDENCE_MAX, max(CONFIDENCE_MIN, number)), 6)


def check_files(values: Iterable[str]) -> tuple[str, ...]:
    """Paths or globs: trimmed, distinct, non-empty, each of bounded length, at most FILES_MAX_COUNT; secrets
    redacted."""
    files: list[str] = []
    for value in values:
        path = str(value).strip()
        if not path:
            continue
        if "\x00" in path or not _is_utf8(path):
            raise ValidationError(f"The file path {_preview(path)!r} is not a path.")
        # A path can hold a token (a pasted URL with credentials, a key file named by its key): redacted before its
        # length is judged, so a long token does not make an otherwise fine path too long.
        path = redact(path)
        if len(path) > FILE_PATH_MAX_CHARS:
            raise ValidationError(f"The file path {_preview(path)!r} is too long or not a path.")
        if path not in files:
            files.append(path)
    if len(files) > FILES_MAX_COUNT:
        raise ValidationError(f"A memory can name at most {FILES_MAX_COUNT} files; got {len(files)}.")
    return tuple(files)


def _is_utf8(text: str) -> bool:
    """False for a string holding lone surrogates (from undecodable bytes or a JSON escape): SQLite cannot store it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _preview(value: object, limit: int = 60) -> str:
    # Error messages reach logs and agents: never quote a secret, nor cut one in half before redacting it.
    text = redact(str(value))
    return text if len(text) <= limit else text[:limit] + "…"


_MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@\[\]-]{0,99}")
IDLE_MINUTES_MAX = 24 * 60


def check_model_name(value: str) -> str:
    """A model name as the agent CLIs take it (`claude-haiku-4-5`, `gpt-5-mini`); never a pasted key.

    Raises:
        ValidationError: it holds spaces or other characters no model name has, or it reads as a secret.
    """
    name = str(value).strip()
    if redact(name) != name:
        raise ValidationError("That looks like a key, not a model name; keys go in the API key field, never here.")
    if not _MODEL_NAME.fullmatch(name):
        raise ValidationError(f"{_preview(name)!r} is not a model name (letters, digits and . _ : / @ - only).")
    return name


def check_idle_minutes(value: float) -> float:
    """Minutes from 0 to a day, finite.

    Raises:
        ValidationError: NaN, infinite, negative or over a day.
    """
    try:
        minutes = float(value)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{value!r} is not a number of minutes.") from exc
    if not math.isfinite(minutes) or not 0 <= minutes <= IDLE_MINUTES_MAX:
        raise ValidationError(f"Idle minutes must be a number from 0 to {IDLE_MINUTES_MAX}, not {value!r}.")
    return minutes
