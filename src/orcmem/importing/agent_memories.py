"""The agents' own memories into orcmem's: Claude Code's auto memory folder and Codex's memories folder
(docs/importing.md says where each lives and how it is read). Both were written by an agent: provenance `agent`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from orcmem.importing.files import read_note
from orcmem.importing.items import ImportItem, body_text, files_named, item_key, plain, shorten, title_from
from orcmem.importing.kinds import kind_of
from orcmem.importing.markdown import entries, without_front_matter
from orcmem.models.constants import TITLE_MAX_CHARS
from orcmem.models.types import MemoryType, Provenance, Scope, Source
from orcmem.models.vocabulary import ImportKind

CLAUDE_INDEX = "MEMORY.md"  # Claude Code's index of its topic files, loaded into every session
TOPIC_FILES_MAX = 500  # a memory folder holds tens of topic files; more are left out, not read
# `type:` in a topic file's front matter (Claude Code's memory instructions), to the memory type it means; a type
# with None is read from the words, with the fallback beside it.
CLAUDE_TYPES: dict[str, tuple[MemoryType | None, MemoryType]] = {
    "user": (MemoryType.PREFERENCE, MemoryType.PREFERENCE),  # who the user is and what they prefer
    "feedback": (None, MemoryType.CONVENTION),  # how to work, from the user's corrections
    "project": (None, MemoryType.FACT),  # ongoing work, goals, constraints
    "reference": (MemoryType.FACT, MemoryType.FACT),  # where things are: dashboards, tickets, documents
}
_INDEX_LINK = re.compile(r"^\[[^\]]+\]\(([^)\s]+\.md)\)")


def _agent_item(kind: ImportKind, where: str, text: str, heading: str, origin: str, scope: Scope) -> ImportItem:
    words = plain(text)
    return ImportItem(
        key=item_key(kind.value, where, words),
        type=kind_of(words, heading),
        title=title_from(words),
        body=body_text(words),
        source=Source.AGENT,
        provenance=Provenance.AGENT,
        origin=origin,
        scope=scope,
        files=files_named(words),
    )


def claude_memory_items(folder: Path) -> list[ImportItem]:
    """Every memory in a Claude Code auto memory folder: each topic file with front matter is one (its name, its
    description and its text), a topic file without is cut into entries, and MEMORY.md's own lines are read except
    those that only point at a topic file."""
    kind = ImportKind.CLAUDE_MEMORY
    items: list[ImportItem] = []
    topics = sorted(p for p in folder.rglob("*.md") if p.is_file() and p.name != CLAUDE_INDEX)[:TOPIC_FILES_MAX]
    index = folder / CLAUDE_INDEX
    if index.is_file():
        for entry in entries(read_note(index)):
            link = _INDEX_LINK.match(entry.text)
            if link and (folder / link.group(1)).is_file():
                continue  # a pointer to a topic file: the file itself is imported
            items.append(
                _agent_item(kind, CLAUDE_INDEX, entry.text, entry.heading, f"{index}:{entry.line}", Scope.PROJECT)
            )
    for topic in topics:
        name = topic.relative_to(folder).as_posix()
        fields, rest = without_front_matter(read_note(topic))
        if "name" in fields or "description" in fields:
            items.append(_topic_item(kind, name, fields, rest, str(topic)))
            continue
        for entry in entries(rest):
            heading = entry.heading or topic.stem.replace("-", " ").replace("_", " ")
            items.append(_agent_item(kind, name, entry.text, heading, f"{topic}:{entry.line}", Scope.PROJECT))
    return items


def _topic_item(kind: ImportKind, name: str, fields: dict[str, str], rest: str, origin: str) -> ImportItem:
    """One topic file with front matter as one memory: its name for a title, its description and text for a body."""
    title = fields.get("name") or fields.get("description") or Path(name).stem
    description = fields.get("description", "")
    text = plain("\n\n".join(part for part in (description, rest.strip()) if part))
    claude_type = fields.get("type", "").lower()
    fixed, fallback = CLAUDE_TYPES.get(claude_type, (None, MemoryType.FACT))
    found = fixed or kind_of(text)
    # Feedback is how to work: a command it names shows how to follow it, and does not make it a command.
    if found is MemoryType.FACT or (claude_type == "feedback" and found is MemoryType.COMMAND):
        found = fallback
    return ImportItem(
        key=item_key(kind.value, name, f"{title}\n{text}"),
        type=found,
        title=shorten(title, TITLE_MAX_CHARS),
        body=body_text(text or title),
        source=Source.AGENT,
        provenance=Provenance.AGENT,
        origin=origin,
        files=files_named(text),
    )


# --- Codex --------------------------------------------------------------------------------------------------------
CODEX_HANDBOOK = "MEMORY.md"  # Codex's handbook: blocks of a YAML header (the runs it came from) and bullets
CODEX_SUMMARY = "memory_summary.md"  # loaded into every Codex session; its "General Tips" hold user-wide habits
CODEX_GENERAL_HEADING = "General Tips"
_CWD = re.compile(r"cwd=([^,)]+)")


@dataclass
class CodexBlock:
    """One block of Codex's MEMORY.md: the folders its runs worked in, its description, its bullets."""

    line: int
    body_start: int = 0
    cwds: list[str] = field(default_factory=list)
    description: str = ""
    body: list[str] = field(default_factory=list)


def codex_blocks(text: str) -> list[CodexBlock]:
    """The blocks of Codex's MEMORY.md (each opens with a `---` header holding `rollout_summary_files` and
    `description`, closed by `---`, then bullets); text before the first header is one block with no folder."""
    blocks = [CodexBlock(line=1)]
    in_header = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() == "---":
            if in_header:
                in_header = False
            else:
                in_header = True
                blocks.append(CodexBlock(line=number))
            continue
        block = blocks[-1]
        if in_header:
            block.cwds += [cwd.strip() for cwd in _CWD.findall(line)]
            if line.startswith("description:"):
                block.description = line.split(":", 1)[1].strip()
        else:
            if not block.body:
                block.body_start = number
            block.body.append(line)
    return [block for block in blocks if any(line.strip() for line in block.body)]


def within(cwd: str, roots: tuple[str, ...]) -> bool:
    """Whether a folder is one of `roots` or under one."""
    clean = cwd.rstrip("/")
    return any(clean == root.rstrip("/") or clean.startswith(root.rstrip("/") + "/") for root in roots)


def codex_memory_items(folder: Path, roots: tuple[str, ...], *, everything: bool = False) -> list[ImportItem]:
    """The memories in Codex's memories folder for the project at `roots` (its folders): each bullet of a
    MEMORY.md block whose runs worked there; with `everything`, the other blocks and memory_summary.md's General
    Tips too, as global memories."""
    kind = ImportKind.CODEX_MEMORY
    items: list[ImportItem] = []
    handbook = folder / CODEX_HANDBOOK
    if handbook.is_file():
        for block in codex_blocks(read_note(handbook)):
            here = any(within(cwd, roots) for cwd in block.cwds)
            if not here and not everything:
                continue
            scope = Scope.PROJECT if here else Scope.GLOBAL
            for entry in entries("\n" * (block.body_start - 1) + "\n".join(block.body)):
                items.append(
                    _agent_item(kind, CODEX_HANDBOOK, entry.text, block.description, f"{handbook}:{entry.line}", scope)
                )
    summary = folder / CODEX_SUMMARY
    if everything and summary.is_file():
        for entry in entries(read_note(summary)):
            if entry.heading == CODEX_GENERAL_HEADING:
                items.append(
                    _agent_item(kind, CODEX_SUMMARY, entry.text, entry.heading, f"{summary}:{entry.line}", Scope.GLOBAL)
                )
    return items
