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
        rows = conn.execute(
            "SELECT m.type, m.title, m.body, m.source, m.last_confirmed_at, m.flagged "
            "FROM memories_fts JOIN memories m ON m.pk = memories_fts.rowid "
            "WHERE memories_fts MATCH ? AND m.status = 'active' AND (m.project_id = ? OR m.scope = 'global') "
            f"ORDER BY bm25(memories_fts, {FTS_TITLE_WEIGHT}, {FTS_BODY_WEIGHT}), m.updated_at DESC LIMIT ?",
            (match, project_id, limit),
        ).fetchall()
        return [(str(t), str(ti), str(b), str(s), int(c), bool(f)) for t, ti, b, s, c, f in rows]
    finally:
        conn.close()
