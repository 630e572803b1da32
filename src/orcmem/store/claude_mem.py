"""Reading a claude-mem database (thedotmack/claude-mem, `~/.claude-mem/claude-mem.db`): its observations, opened
read-only, whatever columns its version has (docs/importing.md)."""

from __future__ import annotations

from pathlib import Path

import apsw

from orcmem.models.data_shapes import JsonObject
from orcmem.models.errors import ValidationError
from orcmem.store.connection import open_read_only

# The observation columns orcmem reads, as claude-mem's schema names them; a column an older version lacks is None.
OBSERVATION_COLUMNS = (
    "id",
    "memory_session_id",
    "project",
    "type",
    "title",
    "subtitle",
    "narrative",
    "text",
    "facts",
    "concepts",
    "files_read",
    "files_modified",
    "created_at",
    "created_at_epoch",
)


def read_observations(path: Path) -> list[JsonObject]:
    """Every observation of the claude-mem database at `path`, oldest first, as claude-mem stores it.

    Raises:
        ValidationError: the file is not an SQLite database, or holds no observations table.
    """
    try:
        conn = open_read_only(path)
    except apsw.Error as exc:
        raise ValidationError(f"Cannot open {path} as a claude-mem database ({exc}).") from None
    try:
        columns = {str(row[1]) for row in conn.execute("PRAGMA table_info(observations)")}
        if not {"id", "type", "title"} <= columns:
            raise ValidationError(f"{path} holds no claude-mem observations table.")
        wanted = [name if name in columns else f"NULL AS {name}" for name in OBSERVATION_COLUMNS]
        order = "created_at_epoch, id" if "created_at_epoch" in columns else "id"
        rows = conn.execute(f"SELECT {', '.join(wanted)} FROM observations ORDER BY {order}").fetchall()
    except apsw.Error as exc:
        raise ValidationError(f"Cannot read {path} as a claude-mem database ({exc}).") from None
    finally:
        conn.close()
    return [dict(zip(OBSERVATION_COLUMNS, row, strict=True)) for row in rows]
