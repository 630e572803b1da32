"""Which memories a project sees: its own, and every global one. The one statement of that rule in SQL.

Each fragment reads a memories table aliased `m`; they differ only in how the project id is bound.
"""

from __future__ import annotations

VISIBLE = "(m.project_id = :project OR m.scope = 'global')"  # bound by name, `:project`
VISIBLE_AT = "(m.project_id = ? OR m.scope = 'global')"  # bound by position
# The same rule with the columns' indexes switched off (`+`), for a query that already reads few rows by another index.
VISIBLE_UNINDEXED_AT = "(+m.project_id = ? OR +m.scope = 'global')"
