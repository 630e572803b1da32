"""Names for data whose shape is known only where it is read: JSON from outside, and rows as the databases give them.

Each is `Any` underneath, for the one reason written beside it: a precise type (a recursive JSON union, a tuple
per query) would turn every checked read into a cast without checking anything more. Everything else in src/ names
its real type (scripts/code_counts.py counts what is left).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

# Any JSON value, as json.loads gives it (a config file, a hook's payload, the wire, a model's answer): whoever
# reads it checks each member it uses (isinstance, .get) and falls back cleanly on anything else.
JsonValue = Any
# A JSON object: members as JsonValue. Also what a command or a tool answers as JSON.
JsonObject = dict[str, Any]
# A row as SQLite (apsw) or PostgreSQL (psycopg) gives it, and the values bound to a statement: each column's type
# is the schema's, read by position right beside the SQL that names it.
Row = tuple[Any, ...]
# A value bound to a statement's placeholder (what SQLite stores), and the values of one statement.
SqlValue = int | float | str | bytes | None
Bindings = Sequence[SqlValue] | Mapping[str, SqlValue]
