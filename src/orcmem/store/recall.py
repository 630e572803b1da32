"""The read the prompt hook makes on every prompt: one connection, three small queries, no repositories.

It deliberately avoids the rest of the store (dataclasses, vectors, migrations): it only reads, and a database
it does not recognise yields nothing rather than an upgrade. Its relevance gate needs no further query: it
tokenizes the few rows read with the full-text index's own tokenizer and counts the prompt's terms they hold.
"""

from __future__ import annotations

import json
import os
from collections import namedtuple
from collections.abc import Sequence

import apsw

from orcmem.models.constants import (
    BUSY_TIMEOUT_MS,
    FTS_BODY_WEIGHT,
    FTS_TITLE_WEIGHT,
    RECALL_ENOUGH_TERMS,
    RECALL_MAX_MEMORIES,
    RECALL_MIN_TERM_SHARE,
    SCHEMA_VERSION,
    SETTING_MEMORY_ENABLED,
)
from orcmem.store.visibility import VISIBLE_AT

TYPE_CHECKING = False  # importing typing costs the prompt hook milliseconds
if TYPE_CHECKING:
    from orcmem.models.data_shapes import Row

# One recalled memory, as much of it as a recalled line shows (collections' namedtuple: `typing` costs the hook).
# `id` and `updated_at` tell a session's recall whether it already gave this memory, unchanged.
RecallRow = namedtuple(  # noqa: PYI024
    "RecallRow",
    "type title body source confirmed_at flagged id updated_at stale provenance replaced",
    defaults=(None, None, None),
)
# What a memory replaced (docs/learning.md, Contradictions): each older title and when, as "title\x1fms" joined by
# "\x1e", for `agent_context.recall.replaced_note` to word.
REPLACED = (
    "(SELECT group_concat(t.title || char(31) || l.at, char(30)) FROM memory_links l JOIN memories t "
    "ON t.pk = l.to_pk WHERE l.from_pk = m.pk AND l.relation = 'replaces')"
)


def _recall_row(row: Sequence[object]) -> RecallRow:
    """A row read with `_COLUMNS` as a RecallRow (one place, so a new column reaches every reader)."""
    t, ti, b, s, c, f, i, u, st, p, r = row
    return RecallRow(str(t), str(ti), str(b), str(s), int(c), bool(f), str(i), int(u), st, str(p), r)  # type: ignore[call-overload]


WINDOW_FACTOR = 8  # how many BM25-best matches per wanted memory are read before falling back to every match
_COLUMNS = (
    "m.type, m.title, m.body, m.source, m.last_confirmed_at, m.flagged, m.id, m.updated_at, "
    "(SELECT fr.reason FROM freshness fr WHERE fr.memory_pk = m.pk AND fr.state = 'stale'), m.provenance, " + REPLACED
)
_VISIBLE = f"m.status = 'active' AND {VISIBLE_AT}"
# The tokenizer of memories_fts (migrations), so a prompt's words are matched against a memory exactly as FTS5 does.
_TOKENIZER = ("porter", ["unicode61", "remove_diacritics", "2"])
_OR = " OR "

Phrase = tuple[tuple[str, ...], bool]  # the phrase's tokens, and whether its last token is a prefix


def required_terms(terms: int, share: float = RECALL_MIN_TERM_SHARE, enough: int = RECALL_ENOUGH_TERMS) -> int:
    """How many of a prompt's `terms` one memory must hold for recall to inject anything: a share, capped."""
    return min(int(-(-terms * share // 1)), enough)  # the share rounded up, without importing math


def _memory_on(conn: apsw.Connection) -> bool | None:
    """Whether the database says memory is on; None when it is from another schema version."""
    conn.setbusytimeout(BUSY_TIMEOUT_MS)
    if conn.execute("PRAGMA user_version").fetchall()[0][0] != SCHEMA_VERSION:
        return None
    enabled = conn.execute("SELECT value FROM settings WHERE key = ?", (SETTING_MEMORY_ENABLED,)).fetchall()
    return bool(enabled) and enabled[0][0] == "true"


def memory_enabled(db_path: str | os.PathLike[str]) -> bool | None:
    """Whether memory is on: False before the database exists (a new profile starts off), None when it cannot be
    read or is from another version."""
    if not os.path.exists(db_path):
        return False
    try:
        conn = apsw.Connection(os.fspath(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.Error:
        return None
    try:
        return _memory_on(conn)
    except apsw.Error:
        return None
    finally:
        conn.close()


def _project_reader(db_path: str | os.PathLike[str], canonical_root: str) -> tuple[apsw.Connection, str] | None:
    """A read-only connection and the id of the project at `canonical_root` ("" before it has one), for the caller
    to close; None when the database is missing, memory is off or the database is from another version."""
    if not os.path.exists(db_path):
        return None
    conn = apsw.Connection(os.fspath(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        if not _memory_on(conn):
            conn.close()
            return None
        found = conn.execute("SELECT id FROM projects WHERE canonical_root = ?", (canonical_root,)).fetchall()
    except BaseException:
        conn.close()
        raise
    return conn, str(found[0][0]) if found else ""


def past_gate(found: tuple[list[RecallRow], bool] | None) -> list[RecallRow] | None:
    """`word_candidates`' matches if they pass its relevance gate, else []; None when memory is off or unreadable."""
    if found is None:
        return None
    rows, relevant = found
    return rows if relevant else []


def word_candidates(
    db_path: str | os.PathLike[str],
    canonical_root: str,
    match: str,
    limit: int,
    *,
    share: float = RECALL_MIN_TERM_SHARE,
    enough: int = RECALL_ENOUGH_TERMS,
) -> tuple[list[RecallRow], bool] | None:
    """Active memories of the project (and global ones) matching `match`, best BM25 first, newest on ties, and
    whether they pass the relevance gate (`past_gate` keeps them only then; recall by meaning decides for itself).

    `match` is `recall_match`'s expression: quoted terms joined with OR. The gate holds when one of the matches
    holds at least `share` of those terms, or `enough` of them: a prompt that shares a word or two with the
    memory by chance ("what time is it in Tokyo") gets nothing.

    Returns None when memory is off, the database is missing or from another version.
    """
    opened = _project_reader(db_path, canonical_root)
    if opened is None:
        return None
    conn, project_id = opened
    try:
        # Rank the best matches by BM25 alone first, then read and filter only those; the full join (every match
        # against its memory row) runs only when too few of them are this project's active memories.
        window = limit * WINDOW_FACTOR
        rows: list[Row] = conn.execute(
            "WITH top AS MATERIALIZED "
            f"(SELECT rowid, bm25(memories_fts, {FTS_TITLE_WEIGHT}, {FTS_BODY_WEIGHT}) AS rank "
            "FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?) "
            f"SELECT {_COLUMNS}, (SELECT count(*) FROM top) FROM top CROSS JOIN memories m ON m.pk = top.rowid "
            f"WHERE {_VISIBLE} ORDER BY top.rank, m.updated_at DESC LIMIT ?",
            (match, window, project_id, limit),
        ).fetchall()
        if len(rows) < limit and (not rows or rows[0][-1] >= window):
            rows = conn.execute(
                f"SELECT {_COLUMNS}, 0 FROM memories_fts JOIN memories m ON m.pk = memories_fts.rowid "
                f"WHERE memories_fts MATCH ? AND {_VISIBLE} "
                f"ORDER BY bm25(memories_fts, {FTS_TITLE_WEIGHT}, {FTS_BODY_WEIGHT}), m.updated_at DESC LIMIT ?",
                (match, project_id, limit),
            ).fetchall()
        found_rows = [_recall_row(row[:-1]) for row in rows]
        # The gate looks at the matches recall would show first, however many more were read.
        return found_rows, bool(found_rows) and _relevant(conn, match, found_rows[:RECALL_MAX_MEMORIES], share, enough)
    finally:
        conn.close()


def _relevant(conn: apsw.Connection, match: str, rows: Sequence[RecallRow], share: float, enough: int) -> bool:
    """Whether one of `rows` holds enough of the prompt's terms (the relevance gate).

    BM25 ranks a memory that shares one common word with the prompt above nothing at all, so an off-topic prompt
    always found something. Counting the terms each found memory holds (the same tokens FTS5 matched) needs no
    further query: only the few rows already read are tokenized.
    """
    tokenize = conn.fts5_tokenizer(*_TOKENIZER)
    phrases = [phrase for phrase in (_phrase(tokenize, part) for part in match.split(_OR)) if phrase[0]]
    if not phrases:
        return False
    needed = required_terms(len(phrases), share, enough)
    for _type, title, body, *_rest in rows:
        columns = (
            _tokens(tokenize, title, apsw.FTS5_TOKENIZE_DOCUMENT),
            _tokens(tokenize, body, apsw.FTS5_TOKENIZE_DOCUMENT),
        )
        vocabulary = {*columns[0], *columns[1]}
        if sum(_holds(columns, vocabulary, phrase) for phrase in phrases) >= needed:
            return True
    return False


def _tokens(tokenize: apsw.FTS5Tokenizer, text: str, flags: int) -> tuple[str, ...]:
    found = tokenize(text.encode(), flags, None, include_offsets=False, include_colocated=False)
    return tuple(token for token in found if isinstance(token, str))  # without offsets, every token is a string


def _phrase(tokenize: apsw.FTS5Tokenizer, part: str) -> Phrase:
    """One `"term"` or `"term"*` of the expression, tokenized as FTS5 tokenizes the query."""
    text = part.strip()
    prefix = text.endswith("*")
    text = text.rstrip("*").strip('"')
    flags = apsw.FTS5_TOKENIZE_QUERY | (apsw.FTS5_TOKENIZE_PREFIX if prefix else 0)
    return _tokens(tokenize, text, flags), prefix


def _holds(columns: Sequence[Sequence[str]], vocabulary: set[str], phrase: Phrase) -> bool:
    """Whether a row holds the phrase: its tokens one after another in one column, the last a prefix if marked."""
    words, prefix = phrase
    *lead, last = words
    if not all(word in vocabulary for word in lead):
        return False
    if not lead:  # one word, the usual case: a set lookup, or a scan of the row's distinct tokens for a prefix
        return last in vocabulary or (prefix and any(token.startswith(last) for token in vocabulary))
    size = len(words)
    for tokens in columns:
        for start in range(len(tokens) - size + 1):
            end = tokens[start + size - 1]
            if list(tokens[start : start + size - 1]) == lead and (end.startswith(last) if prefix else end == last):
                return True
    return False


def tool_rows(
    db_path: str | os.PathLike[str],
    canonical_root: str,
    files: Sequence[str],
    terms: Sequence[str],
    types: Sequence[str],
    limit: int,
) -> list[RecallRow] | None:
    """The memories a tool call concerns: the active, not possibly stale memories of the project (and global ones)
    that cite one of `files` (paths relative to the project root, matched exactly), then those of `types` whose
    words hold every one of `terms` (a command's program and subcommand); newest first within each. None when
    memory is off, the database is missing or from another version."""
    opened = _project_reader(db_path, canonical_root)
    if opened is None:
        return None
    conn, project_id = opened
    try:
        fresh = "NOT EXISTS (SELECT 1 FROM freshness fr WHERE fr.memory_pk = m.pk AND fr.state = 'stale')"
        rows: list[Row] = []
        if files:
            listed = json.dumps(list(files))
            rows += conn.execute(
                f"SELECT {_COLUMNS} FROM memories m WHERE m.pk IN (SELECT memory_pk FROM citations WHERE kind = "
                "'file' AND target IN (SELECT value FROM json_each(?)) UNION SELECT memory_pk FROM memory_files "
                f"WHERE path_glob IN (SELECT value FROM json_each(?))) AND {_VISIBLE} AND {fresh} "
                "ORDER BY m.updated_at DESC LIMIT ?",
                (listed, listed, project_id, limit),
            ).fetchall()
        if terms and types and len(rows) < limit:
            match = " ".join('"' + term.replace('"', '""') + '"' for term in terms)  # FTS5: every term (AND)
            kinds = json.dumps(list(types))
            rows += conn.execute(
                f"SELECT {_COLUMNS} FROM memories_fts JOIN memories m ON m.pk = memories_fts.rowid "
                f"WHERE memories_fts MATCH ? AND m.type IN (SELECT value FROM json_each(?)) AND {_VISIBLE} "
                f"AND {fresh} ORDER BY bm25(memories_fts, {FTS_TITLE_WEIGHT}, {FTS_BODY_WEIGHT}), "
                "m.updated_at DESC LIMIT ?",
                (match, kinds, project_id, limit - len(rows)),
            ).fetchall()
        seen: set[str] = set()
        result = []
        for row in rows:
            if row[6] not in seen:
                seen.add(row[6])
                result.append(_recall_row(row))
        return result
    finally:
        conn.close()
