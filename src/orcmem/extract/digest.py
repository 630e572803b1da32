"""The digest of a run: what the user asked, which files changed, what the tools did, and what the agent said."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field

from orcmem.models.constants import (
    AGENT_SAID_MAX,
    DIGEST_MAX_CHARS,
    DIGEST_MESSAGE_SEPARATOR,
    DIGEST_TRUNCATION_MARK,
    FILES_TOUCHED_MAX,
    TOOL_LINES_MAX,
    TOOL_OUTPUT_MAX_CHARS,
)
from orcmem.models.ledger import EventKind, LedgerEvent
from orcmem.text.textsafe import neutralize

# JavaScript's \s (the whitespace the digest format in docs/learning.md collapses) also matches U+FEFF; Python's
# does not.
_WHITESPACE = re.compile(r"[\s\ufeff]+")
# Tool output, file and web text is fenced as data: <tool-data-NONCE> ... </tool-data-NONCE>, with a fresh random
# NONCE per digest, so no text a tool returned can close the fence (it would have to guess 64 random bits). The
# tag's name as it may be spelled inside that text (any case, look-alike letters, any separator) is neutralised
# too, so a fake closer cannot even look like one to the model.
DATA_TAG = "tool-data"
_DATA_TAG_LOOKALIKE = re.compile(r"tool[\s_.·:/-]*data")
_NEUTRAL_TAG = "(tool output)"


@dataclass(slots=True)
class Digest:
    """A run reduced to four lists; the caps of the tool and file lists are already applied."""

    prompts: list[str] = field(default_factory=list)
    assistant: list[str] = field(default_factory=list)
    tool_lines: list[str] = field(default_factory=list)
    files_touched: list[str] = field(default_factory=list)


def tool_line(name: str, output: str, is_error: bool) -> str:
    """One line of tool activity: FAILED when it failed, the tool's name, and its output collapsed and cut."""
    collapsed = _WHITESPACE.sub(" ", output)[:TOOL_OUTPUT_MAX_CHARS]
    return ("FAILED " if is_error else "") + name + ": " + collapsed


def build_digest(events: Iterable[LedgerEvent]) -> Digest:
    """Reduce a run's events, in order, to a digest."""
    digest = Digest()
    tool_names: dict[str, str] = {}
    tool_lines: list[str] = []
    files: dict[str, None] = {}  # an insertion-ordered set
    for event in events:
        if event.kind == EventKind.MESSAGE:
            text = event.text.strip()
            if event.role == "user":
                digest.prompts.append(text)
            elif text:
                digest.assistant.append(text)
        elif event.kind == EventKind.TOOL_STARTED:
            if event.tool_call_id is not None and event.name:
                tool_names[event.tool_call_id] = event.name
        elif event.kind == EventKind.TOOL_COMPLETED:
            remembered = tool_names.get(event.tool_call_id) if event.tool_call_id is not None else None
            name = event.name or remembered or "tool"
            tool_lines.append(tool_line(name, event.text, event.is_error))
        elif event.kind == EventKind.FILE_CHANGED:
            files.setdefault(f"{event.name or 'change'} {event.text}", None)
    digest.tool_lines = tool_lines[-TOOL_LINES_MAX:]
    digest.files_touched = list(files)[:FILES_TOUCHED_MAX]
    return digest


def data_nonce() -> str:
    """A fresh fence code for one digest: 16 hex characters from 64 random bits."""
    return secrets.token_hex(8)


def fence_data(lines: Iterable[str], nonce: str) -> str:
    """Lines of tool, file or web text inside the data fence, every look-alike of its tag neutralised."""
    body = "\n".join(neutralize(line, _DATA_TAG_LOOKALIKE, _NEUTRAL_TAG) for line in lines)
    return f"<{DATA_TAG}-{nonce}>\n{body}\n</{DATA_TAG}-{nonce}>"


def is_empty(digest: Digest) -> bool:
    """True when the run has no user message and no tool activity: such a run is skipped without an error."""
    return not digest.prompts and not digest.tool_lines


def render_digest(digest: Digest, max_chars: int = DIGEST_MAX_CHARS, nonce: str | None = None) -> str:
    """The digest as the prompt's text: up to four sections, the changed files and the tool activity inside the data
    fence (`nonce`, fresh when None), then cut to `max_chars` with a truncation mark; a cut inside the fence closes
    it."""
    code = nonce or data_nonce()
    sections: list[str] = []
    if digest.prompts:
        sections.append("## User asked\n" + DIGEST_MESSAGE_SEPARATOR.join(digest.prompts))
    if digest.files_touched:
        sections.append("## Files changed\n" + fence_data(digest.files_touched, code))
    if digest.tool_lines:
        sections.append("## Tool activity\n" + fence_data(digest.tool_lines, code))
    if digest.assistant:
        sections.append("## Agent said\n" + DIGEST_MESSAGE_SEPARATOR.join(digest.assistant[-AGENT_SAID_MAX:]))
    text = "\n\n".join(sections)
    if len(text) > max_chars:
        text = text[:max_chars] + DIGEST_TRUNCATION_MARK
        opener, closer = f"<{DATA_TAG}-{code}>", f"</{DATA_TAG}-{code}>"
        if text.count(opener) > text.count(closer):  # the code appears nowhere else, so counting is exact
            text += "\n" + closer
    return text
