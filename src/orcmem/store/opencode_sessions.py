"""Reading one session of OpenCode's database (`opencode.db`, 1.x: tables `session`, `message`, `part`, their
`data` columns JSON), opened read-only while OpenCode may be writing it (WAL): its messages after a row, with parts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import apsw

from orcmem.models.errors import NotFoundError
from orcmem.store.connection import open_read_only

BUSY_TIMEOUT_MS = 2000  # OpenCode checkpoints its WAL now and then; a reader waits that long at most


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One message row: its rowid (the order OpenCode wrote them in, and the ingest's offset), id, data, parts."""

    rowid: int
    id: str
    data: str
    parts: tuple[str, ...]  # each part's `data`, in the order written


def session_messages(path: Path, session_id: str, after: int, limit: int) -> list[StoredMessage]:
    """The session's messages written after rowid `after`, at most `limit`, oldest first, with their parts.

    Raises:
        NotFoundError: the file cannot be opened as OpenCode's database, or lacks its tables.
    """
    try:
        conn = open_read_only(path)
    except apsw.Error as exc:
        raise NotFoundError(f"cannot open {path} as OpenCode's database ({exc})") from None
    try:
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        with conn:  # one read transaction: the messages and their parts as of one moment
            rows = conn.execute(
                "SELECT rowid, id, data FROM message WHERE session_id = ? AND rowid > ? ORDER BY rowid LIMIT ?",
                (session_id, after, limit),
            ).fetchall()
            parts: dict[str, list[str]] = {str(row[1]): [] for row in rows}
            if rows:
                found = conn.execute(
                    "SELECT message_id, data FROM part WHERE session_id = ? AND message_id IN "
                    "(SELECT id FROM message WHERE session_id = ? AND rowid > ? AND rowid <= ?) ORDER BY rowid",
                    (session_id, session_id, after, rows[-1][0]),
                )
                for message_id, data in found:
                    parts.setdefault(str(message_id), []).append(str(data))
    except apsw.Error as exc:
        raise NotFoundError(f"cannot read {path} as OpenCode's database ({exc})") from None
    finally:
        conn.close()
    return [StoredMessage(_rowid(row[0]), str(row[1]), str(row[2]), tuple(parts[str(row[1])])) for row in rows]


def _rowid(value: object) -> int:
    assert isinstance(value, int)  # SQLite's rowid is an integer
    return value
