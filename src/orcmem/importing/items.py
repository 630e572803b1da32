"""One memory to import, as a reader found it, and the small text helpers every reader shares."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from orcmem.models.constants import BODY_MAX_CHARS, FILE_PATH_MAX_CHARS, FILES_MAX_COUNT, TITLE_MAX_CHARS
from orcmem.models.types import MemoryType, Provenance, Scope, Source

ELLIPSIS = "\u2026"
SHORT_TITLE_CHARS = 80  # an entry this short is its own title
# A backticked span that names a file: a path with a slash, or a name with a known kind of extension.
_CODE_SPAN = re.compile(r"`([^`\n]{1,300})`")
_PATH_LIKE = re.compile(r"^(?:\.{0,2}/)?[\w.@*-]+(?:/[\w.@*{}-]+)+/?$|^[\w*-]+\.(?:[a-z][a-z0-9]{0,5})$")
_NOT_FILE_SUFFIXES = (".com", ".org", ".io", ".net", ".dev")


@dataclass(frozen=True, slots=True)
class ImportItem:
    """A memory to import: its words and kind, who wrote them, and `key`, which names it in its source so the same
    item imported again is recognised; `origin` says where it was (a file and line) for the person."""

    key: str
    type: MemoryType
    title: str
    body: str
    source: Source
    provenance: Provenance
    origin: str
    scope: Scope = Scope.PROJECT
    files: tuple[str, ...] = ()


def item_key(kind: str, where: str, text: str) -> str:
    """A stable name for an item: its kind, where it was, and a digest of its words once whitespace is normalised
    (a changed item is a new one; moved lines are not)."""
    digest = hashlib.sha256(" ".join(text.split()).casefold().encode("utf-8")).hexdigest()[:24]
    return f"{kind}:{where}:{digest}"


def shorten(text: str, limit: int) -> str:
    """`text` on one line within `limit` characters, cut at a word with an ellipsis when too long."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:-") + ELLIPSIS


def body_text(text: str) -> str:
    """`text` within a memory's body limit, its lines kept (a long one is cut with an ellipsis)."""
    kept = "\n".join(line.rstrip() for line in text.strip().splitlines())
    if len(kept) <= BODY_MAX_CHARS:
        return kept
    return kept[: BODY_MAX_CHARS - 1].rstrip() + ELLIPSIS


def title_from(text: str) -> str:
    """A title from an entry: the whole of a short one; else its bold lead or the words before a colon, else its
    first sentence, in one line."""
    flat = " ".join(text.split())
    if len(flat) <= SHORT_TITLE_CHARS:
        return flat
    bold = re.match(r"^\*\*(.{3,120}?)\*\*[:.\s-]*", flat)
    if bold:
        return shorten(bold.group(1).rstrip(":. "), TITLE_MAX_CHARS)
    lead = re.match(r"^([^:`]{3,80}):\s+\S", flat)
    if lead:
        return shorten(lead.group(1), TITLE_MAX_CHARS)
    sentence = re.match(r"^(.{12,}?[.!?])(?:\s|$)", flat)
    return shorten(sentence.group(1) if sentence else flat, TITLE_MAX_CHARS)


def plain(text: str) -> str:
    """Markdown emphasis markers dropped (bold, italics), code spans kept."""
    return re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)


def files_named(text: str) -> tuple[str, ...]:
    """The paths an entry names in code spans, in order, within a memory's limits."""
    found: list[str] = []
    for span in _CODE_SPAN.findall(text):
        candidate = span.strip()
        if " " in candidate or len(candidate) > FILE_PATH_MAX_CHARS or candidate.endswith(_NOT_FILE_SUFFIXES):
            continue
        if _PATH_LIKE.match(candidate) and "://" not in candidate and candidate not in found:
            found.append(candidate.removeprefix("./"))
    return tuple(found[:FILES_MAX_COUNT])
