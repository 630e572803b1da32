"""What both transcript parsers share: complete-line reading, record decoding, text cutting, times, turns."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Protocol

from orcmem.models.constants import CONTEXT_TAG, MAX_EVENT_TEXT
from orcmem.models.data_shapes import JsonObject
from orcmem.models.ledger import NO_PENDING_TURN, EventKind, LedgerEvent, TranscriptChunk, TurnState
from orcmem.models.vocabulary import Agent
from orcmem.text.redact import redact

# Exceptions a record handler may raise on a shape nobody foresaw; the line is then counted as skipped.
# Tests set this to () so that a handler bug surfaces instead of hiding among skipped lines.
RECORD_ERRORS: tuple[type[BaseException], ...] = (Exception,)

Record = JsonObject

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
_CONTEXT_START = "<" + CONTEXT_TAG
# A fence's opener; its id (hex, drawn for each output) names its closer. An opener without one (transcripts
# written before fences had ids) closes at the plain closer.
_CONTEXT_OPEN = re.compile(re.escape(_CONTEXT_START) + r"\b[^>]*>")
_CONTEXT_ID = re.compile(r'\sid="([0-9a-f]+)"')
_CONTEXT_END = "</" + CONTEXT_TAG + ">"


def complete_lines(data: bytes, start_offset: int) -> tuple[list[bytes], int]:
    """The newline-terminated lines of data from start_offset, and the offset just after the last of them."""
    start = max(start_offset, 0)
    if start >= len(data):
        return [], start
    last_newline = data.rfind(b"\n", start)
    if last_newline < 0:
        return [], start  # only a partly written line so far: leave it for the next call
    return data[start:last_newline].split(b"\n"), last_newline + 1


def load_record(line: bytes) -> Record | None:
    """The JSON object on one line, or None when the line is not one."""
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def read_records(lines: Iterable[bytes], handle: Callable[[Record], bool]) -> int:
    """Feed each decoded record to handle (False = not understood); return how many lines were skipped."""
    skipped = 0
    for line in lines:
        if not line.strip():
            continue
        record = load_record(line)
        if record is None:
            skipped += 1
            continue
        try:
            understood = handle(record)
        except RECORD_ERRORS:
            understood = False
        if not understood:
            skipped += 1
    return skipped


def cut_text(text: str, limit: int = MAX_EVENT_TEXT) -> str:
    """Text cut to at most limit characters, the cut counted in a trailing marker; lone surrogates replaced.

    Text that must be cut is redacted first: a secret the cut falls inside would otherwise keep its first half,
    which no rule recognises once the store redacts the event.
    """
    if len(text) > limit:
        text = redact(text)
    if len(text) > limit:
        cut = len(text) - limit
        while True:  # the marker's own length depends on the count it shows; settles in two or three rounds
            marker = f"…[cut {cut} characters]"
            keep = max(limit - len(marker), 0)
            if len(text) - keep == cut:
                break
            cut = len(text) - keep
        text = text[:keep] + marker
    return utf8(text)


def time_ms(value: object) -> int:
    """Milliseconds since the epoch for an ISO-8601 time (UTC when no zone is given); 0 when missing or invalid."""
    if not isinstance(value, str) or not value:
        return 0
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max((moment - _EPOCH) // _MS, 0)


def strip_orcmem_context(text: str, drop_unclosed: bool = True) -> str:
    """Text without orcmem's own fenced context blocks (each from its opener to the closer with the opener's id);
    an unclosed fence drops everything after its start."""
    if _CONTEXT_START not in text:
        return text
    kept: list[str] = []
    position = 0
    while (opener := _CONTEXT_OPEN.search(text, position)) is not None:
        ident = _CONTEXT_ID.search(opener.group(0))
        closer = f'</{CONTEXT_TAG} id="{ident.group(1)}">' if ident else _CONTEXT_END
        end = text.find(closer, opener.end())
        if end < 0:  # unclosed: kept here, and dropped below when asked
            kept.append(text[position : opener.end()])
        else:
            kept.append(text[position : opener.start()])
        position = opener.end() if end < 0 else end + len(closer)
    kept.append(text[position:])
    text = "".join(kept)
    start = text.find(_CONTEXT_START) if drop_unclosed else -1
    return text if start < 0 else text[:start]


def string(value: object) -> str | None:
    """Value when it is a non-empty string (lone surrogates replaced, as in cut_text), else None."""
    return utf8(value) if isinstance(value, str) and value else None


def utf8(text: str) -> str:
    """Text with lone surrogates (from a JSON escape like \\ud800) replaced by "?": the store keeps UTF-8 only, and one
    such title or model name would otherwise fail every ingest of its transcript."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def advance_turns(events: list[LedgerEvent], state: TurnState = NO_PENDING_TURN) -> tuple[int, TurnState]:
    """Turns answered by `events` after `state`: a user prompt counts once an agent message (not an error) follows
    it in the same chain, in this chunk or a later one."""
    pending = {False: state.pending, True: state.pending_sidechain}
    turns = 0
    for event in events:
        if event.kind is not EventKind.MESSAGE:
            continue
        if event.role == "user":
            pending[event.sidechain] += 1
        elif not event.is_error and pending[event.sidechain]:
            turns += pending[event.sidechain]
            pending[event.sidechain] = 0
    return turns, TurnState(pending[False], pending[True])


def count_turns(events: list[LedgerEvent]) -> int:
    """User prompts followed, later in the same chain (main or sidechain), by an agent message that is not an error."""
    return advance_turns(events)[0]


def chunk_of(
    agent: Agent,
    parsed: ParsedSession,
    *,
    end_offset: int,
    skipped_lines: int,
    title: str | None = None,
) -> TranscriptChunk:
    """What a parser found in a run of lines, as a chunk: its events, session facts and turn count."""
    return TranscriptChunk(
        agent=agent,
        events=parsed.events,
        session_id=parsed.session_id,
        cwd=parsed.cwd,
        model=parsed.model,
        title=title,
        turns=count_turns(parsed.events),
        end_offset=end_offset,
        skipped_lines=skipped_lines,
    )


class ParsedSession(Protocol):
    """What each agent's parser state holds when its lines are read."""

    events: list[LedgerEvent]
    session_id: str | None
    cwd: str | None
    model: str | None
