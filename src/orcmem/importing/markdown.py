"""Markdown notes cut into entries: each top-level bullet (with the lines and sub-bullets under it) and each short
paragraph is one, under the nearest heading; a short code block is one too. Front matter, tables, comments, long
prose and the sections named to skip (orcmem's own exported block) are left out."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from orcmem.models.constants import BODY_MAX_CHARS

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_IMPORT_LINE = re.compile(r"^@\S+$")  # CLAUDE.md's `@path` imports another file: not a memory
SHORT_CODE_LINES = 5  # a code block of at most this many lines is an entry (usually the commands of its section)
FEW_WORDS = 4  # an entry of fewer words is read with its heading ("Build: `make`")


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of notes: its words as written, the heading above it, and the line it starts on (from 1)."""

    text: str
    heading: str
    line: int


def without_front_matter(text: str) -> tuple[dict[str, str], str]:
    """A file's YAML front matter as flat `key: value` pairs (lists and nesting left out) and the rest of it."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}, text
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            fields: dict[str, str] = {}
            for line in lines[1:index]:
                match = re.match(r"^([A-Za-z_][\w-]*):\s*(.*)$", line)
                if match and match.group(2).strip():
                    fields[match.group(1).lower()] = match.group(2).strip().strip("\"'")
            return fields, "\n".join([""] * (index + 1) + lines[index + 1 :])  # line numbers stay the file's
    return {}, text


def entries(text: str, *, skip_sections: Sequence[str] = ()) -> list[Entry]:
    """The entries of a markdown text, in order; a heading in `skip_sections` hides its section (down to the next
    heading of its level or above)."""
    found: list[Entry] = []
    heading = ""
    skipping_level = 0  # the level of the skipped section's heading; 0: not skipping
    current: list[str] = []
    start = 0
    is_bullet = False
    fence: list[str] | None = None
    in_comment = False

    def close() -> None:
        nonlocal current, is_bullet
        if current:
            _keep(found, "\n".join(current).strip(), heading, start, is_bullet)
        current, is_bullet = [], False

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if in_comment:
            in_comment = "-->" not in line
            continue
        if fence is not None:
            if _FENCE.match(line):
                if not skipping_level and 0 < len(fence) <= SHORT_CODE_LINES:
                    code = "; ".join(f"`{code_line.strip()}`" for code_line in fence)
                    _keep(found, f"{heading}: {code}" if heading else code, heading, start, False)
                fence = None
            elif line.strip():
                fence.append(line)
            continue
        heading_match = _HEADING.match(line)
        if heading_match:
            close()
            level = len(heading_match.group(1))
            if skipping_level and level > skipping_level:
                continue
            skipping_level = 0
            heading = heading_match.group(2).strip()
            if line.strip() in skip_sections or heading in skip_sections:
                skipping_level = level
            continue
        if skipping_level:
            continue
        if _FENCE.match(line):
            close()
            fence, start = [], number
            continue
        stripped = line.strip()
        if stripped.startswith("<!--"):
            close()
            in_comment = "-->" not in stripped
            continue
        if not stripped or _RULE.match(line) or stripped.startswith("|") or _IMPORT_LINE.match(stripped):
            close()
            continue
        bullet = _BULLET.match(line)
        if bullet and len(bullet.group(1).expandtabs(4)) < 2:
            close()
            current, start, is_bullet = [bullet.group(2).strip()], number, True
        elif bullet and is_bullet:
            current.append(f"- {bullet.group(2).strip()}")
        elif current:
            current[-1] += " " + stripped
        else:
            current, start, is_bullet = [stripped], number, False
    close()
    return found


def _keep(found: list[Entry], text: str, heading: str, line: int, is_bullet: bool) -> None:
    """Add an entry worth a memory: not empty, not long prose, read with its heading when it says little alone."""
    if not text or (not is_bullet and len(text) > BODY_MAX_CHARS) or not re.search(r"\w", text):
        return
    if len(text.split()) < FEW_WORDS and heading and not text.startswith(f"{heading}:"):
        text = f"{heading}: {text}"
    found.append(Entry(text, heading, line))
