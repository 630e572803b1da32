"""The read the prompt hook makes on every prompt: one connection, three small queries, no repositories.

It deliberately avoids the rest of the store (dataclasses, vectors, migrations): it only reads, and a database
it does not recognise yields nothing rather than an upgrade.
"""

from __future__ import annotations

import os

import apsw

from orcmem.models.constants import BUSY_TIMEOUT_MS, FTS_BODY_WEIGHT, FTS_TITLE_WEIGHT, SETTING_MEMORY_ENABLED
from orcmem.store.migrations import LATEST_VERSION

RecallRow = tuple[str, str, str, str, int, bool]
WINDOW_FACTOR = 8  # how many BM25-best matches per wanted memory are read before falling back to every match
_COLUMNS = "m.type, m.title, m.body, m.source, m.last_confirmed_at, m.flagged"
_VISIBLE = "m.status = 'active' AND (m.project_id = ? OR m.scope = 'global')"


def recall_rows(db_path: str | os.PathLike[str], canonical_root: str, match: str, limit: int) -> list[RecallRow] | None:
    """Active memories of the project (and global ones) matching `match`, best BM25 first, newest on ties.

    Returns None when memory is off, the database is missing or from another version; [] when nothing matches.
    """
    if not os.path.exists(db_path):
        return None
    conn = apsw.Connection(os.fspath(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        conn.setbusytimeout(BUSY_TIMEOUT_MS)
        if conn.execute("PRAGMA user_version").fetchall()[0][0] != LATEST_VERSION:
            return None
        enabled = conn.execute("SELECT value FROM settings WHERE key = ?", (SETTING_MEMORY_ENABLED,)).fetchall()
        if not enabled or enabled[0][0] != "true":
            return None
        found = conn.execute("SELECT id FROM projects WHERE canonical_root = ?", (canonical_root,)).fetchall()
        project_id = found[0][0] if found else ""
        # Rank the best matches by BM25 alone first, then read and filter only those; the full join (every match
        # against its memory row) runs only when too few of them are this project's active memories.
        window = limit * WINDOW_FACTOR
        rows = conn.execute(
            f"WITH top AS (SELECT rowid, bm25(memories_fts, {FTS_TITLE_WEIGHT}, {FTS_BODY_WEIGHT}) AS rank "
            "FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?) "
            f"SELECT {_COLUMNS}, (SELECT count(*) FROM top) FROM top JOIN memories m ON m.pk = top.rowid "
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
        return [(str(t), str(ti), str(b), str(s), int(c), bool(f)) for t, ti, b, s, c, f, _n in rows]
    finally:
        conn.close()
