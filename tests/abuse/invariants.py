"""What every stored memory satisfies, whatever wrote it: the limits and kinds a memory is checked against."""

from __future__ import annotations

import math

from orcmem.models.constants import (
    BODY_MAX_CHARS,
    CONFIDENCE_MAX,
    CONFIDENCE_MIN,
    FILE_PATH_MAX_CHARS,
    FILES_MAX_COUNT,
    TITLE_MAX_CHARS,
    TOPIC_KEY_MAX_CHARS,
)
from orcmem.models.types import Memory, MemoryType, Scope, Source, Status


def assert_within_rules(memory: Memory) -> None:
    """The memory's text, topic key and files are within their limits, its kinds are known, it encodes as UTF-8."""
    assert 0 < len(memory.title) <= TITLE_MAX_CHARS and memory.title == memory.title.strip()
    assert 0 < len(memory.body) <= BODY_MAX_CHARS and memory.body == memory.body.strip()
    assert memory.topic_key is None or 0 < len(memory.topic_key) <= TOPIC_KEY_MAX_CHARS
    assert len(memory.files) <= FILES_MAX_COUNT and all(0 < len(f) <= FILE_PATH_MAX_CHARS for f in memory.files)
    assert all("\x00" not in f for f in memory.files)
    assert isinstance(memory.type, MemoryType) and isinstance(memory.scope, Scope)
    assert isinstance(memory.status, Status) and isinstance(memory.source, Source)
    assert math.isfinite(memory.confidence) and CONFIDENCE_MIN <= memory.confidence <= CONFIDENCE_MAX
    # no lone surrogate made it in
    (memory.title + memory.body + (memory.topic_key or "") + "".join(memory.files)).encode("utf-8")
