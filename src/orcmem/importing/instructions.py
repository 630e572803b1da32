"""CLAUDE.md, AGENTS.md and GEMINI.md into memories: each bullet or short paragraph one memory of the type its words
say (importing/kinds.py), in the person's own words (provenance `person`). What `orcmem export` wrote there is
orcmem's already and is left out."""

from __future__ import annotations

from orcmem.importing.items import ImportItem, body_text, files_named, item_key, plain, title_from
from orcmem.importing.kinds import kind_of
from orcmem.importing.markdown import entries
from orcmem.models.constants import EXPORT_HEADING
from orcmem.models.types import Provenance, Scope, Source
from orcmem.models.vocabulary import ImportKind


def instruction_items(text: str, label: str, *, scope: Scope = Scope.PROJECT) -> list[ImportItem]:
    """The memories in one instruction file's text; `label` names the file in keys and origins (a path relative to
    the project, or `~/.claude/CLAUDE.md`)."""
    items: list[ImportItem] = []
    for entry in entries(text, skip_sections=(EXPORT_HEADING,)):
        words = plain(entry.text)
        items.append(
            ImportItem(
                key=item_key(ImportKind.INSTRUCTIONS.value, label, words),
                type=kind_of(words, entry.heading),
                title=title_from(words),
                body=body_text(words),
                source=Source.USER,
                provenance=Provenance.PERSON,
                origin=f"{label}:{entry.line}",
                scope=scope,
                files=files_named(words),
            )
        )
    return items
