"""Reading a transcript file from a byte offset, and telling which agent wrote it."""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import BinaryIO

from orcmem.ingest import claude, codex, copilot, gemini, opencode
from orcmem.ingest.common import complete_lines, load_record
from orcmem.models.errors import NotFoundError
from orcmem.models.ledger import TranscriptChunk
from orcmem.models.vocabulary import Agent

DETECT_BYTES = 64 * 1024  # enough for a few records; a first line cut short is matched by its opening
READ_BYTES = 8 * 1024 * 1024  # a transcript is read this much at a time, so a huge one never fills the memory
_HEADER_LIMIT = 1024 * 1024  # a Codex session_meta line carries the base instructions: tens of KiB
_DETECT_LINES = 20

_CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
_CLAUDE_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "attachment",
        "summary",
        "queue-operation",
        "last-prompt",
        "file-history-snapshot",
        "custom-title",
        "ai-title",
        "mode",
        "permission-mode",
        "agent-name",
    }
)
_CODEX_OPENING = re.compile(
    rb'^\{"timestamp":"[^"]*",(?:"ordinal":\d+,)?"type":"(?:session_meta|response_item|event_msg|turn_context)"'
)
_COPILOT_OPENING = re.compile(rb'^\{"type":"[a-z_]+\.[a-z_.]+","data":\{')
_CLAUDE_OPENING = re.compile(
    rb'^\{"(?:parentUuid|isSidechain|type":"(?:queue-operation|summary|file-history-snapshot))"'
)


SQLITE_HEADER = b"SQLite format 3\x00"  # OpenCode keeps its sessions in one SQLite database


def detect_agent(first_bytes: bytes) -> Agent | None:
    """Which agent wrote a transcript, from its first bytes; None when they match neither format."""
    if first_bytes.startswith(SQLITE_HEADER):
        return Agent.OPENCODE
    for line in first_bytes.split(b"\n", _DETECT_LINES)[:_DETECT_LINES]:
        line = line.strip()
        if not line:
            continue
        record = load_record(line)
        if record is None:  # most likely the first line cut short by the caller's read
            if _CODEX_OPENING.match(line):
                return Agent.CODEX
            if _CLAUDE_OPENING.match(line):
                return Agent.CLAUDE
            if _COPILOT_OPENING.match(line):
                return Agent.COPILOT
            continue
        kind = record.get("type")
        if not isinstance(kind, str):
            kind = None
        if kind in _CODEX_TYPES and "payload" in record:
            return Agent.CODEX
        if copilot.is_copilot_record(record):
            return Agent.COPILOT
        if gemini.is_gemini_record(record):  # before Claude Code's: both write `sessionId` and `type: user`
            return Agent.GEMINI
        if kind in _CLAUDE_TYPES or "sessionId" in record or "parentUuid" in record:
            return Agent.CLAUDE
    return None


def open_transcript(path: Path | str) -> BinaryIO:
    """The transcript file opened for reading, only when it is a regular file: a FIFO, socket, device or folder
    is refused at once (checked before opening, then opened without blocking and checked again on the open
    descriptor, so a file swapped in between cannot block the reader either).

    Raises:
        FileNotFoundError: nothing is there.
        OSError: it cannot be opened, or is not a regular file (its message says which).
    """
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO with no writer opens at once
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def parse_transcript(
    path: Path | str,
    start_offset: int = 0,
    agent: Agent | None = None,
    max_bytes: int = READ_BYTES,
    *,
    session_id: str | None = None,
) -> TranscriptChunk:
    """Ledger events of a transcript file's complete lines from start_offset, at most `max_bytes` of them (the
    chunk says when `more` follow); the agent is detected when not given. OpenCode's database holds every session:
    its offset is a message row, and `session_id` says whose (ingest/opencode.py).

    A line longer than `max_bytes` is skipped whole (counted, never held in memory). A file matching neither
    format is read as Claude Code's unless it is named like a Codex rollout (`rollout-*`); its lines then count as
    skipped. Raises NotFoundError when the file does not exist or cannot be read (a folder, a symlink loop, no
    permission, a FIFO or device: anything but a regular file).
    """
    path = Path(path)
    start = max(start_offset, 0)
    try:
        with open_transcript(path) as file:
            if agent is None:
                agent = detect_agent(file.read(DETECT_BYTES))
                if agent is None:
                    agent = Agent.CODEX if path.name.startswith("rollout-") else Agent.CLAUDE
            if agent is Agent.OPENCODE:
                return opencode.parse_session(path, session_id, start)
            header = None
            if agent is Agent.CODEX and start > 0:
                file.seek(0)
                first = file.readline(_HEADER_LIMIT)
                if first.endswith(b"\n") and len(first) <= start:
                    header = first
            file.seek(start)
            data = file.read(max_bytes)
            giant = len(data) == max_bytes and b"\n" not in data
            if giant:  # one line longer than a slice: skip to its end without keeping it
                skipped_to = _end_of_line(file, start + len(data), max_bytes)
            more = len(data) == max_bytes and file.read(1) != b""
    except FileNotFoundError as error:
        raise NotFoundError(f"transcript not found: {os.fspath(path)}") from error
    except OSError as error:  # a folder, a symlink loop, no permission: nothing to read there either
        raise NotFoundError(f"transcript cannot be read: {os.fspath(path)} ({error.strerror or error})") from error
    if giant:
        if skipped_to < 0:  # its end is not written yet: it is skipped once it is
            return TranscriptChunk(agent=agent, end_offset=start)
        return TranscriptChunk(agent=agent, end_offset=skipped_to, skipped_lines=1, more=True)
    lines, consumed = complete_lines(data, 0)
    end_offset = start + consumed
    if agent is Agent.CODEX:
        chunk = codex.parse_lines(lines, end_offset, header)
    elif agent is Agent.GEMINI:
        chunk = gemini.parse_lines(lines, end_offset)
    elif agent is Agent.COPILOT:
        chunk = copilot.parse_lines(lines, end_offset)
    else:
        chunk = claude.parse_lines(lines, end_offset)
    chunk.more = more
    return chunk


def _end_of_line(file: BinaryIO, position: int, step: int) -> int:
    """The offset just after the newline that ends the line running through `position`, or -1 when the line is
    not finished yet."""
    file.seek(position)
    while block := file.read(step):
        newline = block.find(b"\n")
        if newline >= 0:
            return position + newline + 1
        position += len(block)
    return -1
