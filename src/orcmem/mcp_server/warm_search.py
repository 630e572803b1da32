"""`orcmem search` answered by the warm server: the session's `orcmem mcp` has its model loaded, so the command
prints in milliseconds what its own path would print after loading the model for a second or more.

The request (`{"search": {text, cwd, limit, provenances, explain, json}}`, from `cli/quick_search.py`) is checked
here as the command checks it; anything the command would refuse is refused, and the command then runs its own
path and says why in its own words.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from orcmem.app.formatting import search_output
from orcmem.host.warm import WARM_PATH
from orcmem.host.workspace import Location
from orcmem.models.constants import SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT
from orcmem.models.types import Provenance

TYPE_CHECKING = False
if TYPE_CHECKING:
    from orcmem.service.memory_service import MemoryService

PROVENANCES = frozenset(p.value for p in Provenance)


def search_request(request: dict[str, Any]) -> dict[str, Any] | None:
    """The search's arguments when `request` is a well-formed search, else None (the command answers itself)."""
    asked = request.get("search")
    if not isinstance(asked, dict):
        return None
    text, cwd, limit = asked.get("text"), asked.get("cwd"), asked.get("limit")
    provenances = asked.get("provenances", [])
    if not isinstance(text, str) or not isinstance(cwd, str) or not os.path.isabs(cwd):
        return None
    limit = SEARCH_DEFAULT_LIMIT if limit is None else limit
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= SEARCH_MAX_LIMIT:
        return None
    if not isinstance(provenances, list) or not all(p in PROVENANCES for p in provenances):
        return None
    flags = {name: asked.get(name, False) for name in ("explain", "json")}
    if not all(isinstance(flag, bool) for flag in flags.values()):
        return None
    return {"text": text, "cwd": cwd, "limit": limit, "provenances": tuple(provenances), **flags}


def search_answer(service: MemoryService, asked: dict[str, Any], locate: Callable[[str], Location]) -> dict[str, Any]:
    """What `orcmem search` prints for `asked` (see search_request), searched with the server's loaded model; while
    the model still loads, words answer at once and the notice says so."""
    project = service.project(locate(asked["cwd"]), create=False)
    outcome = service.search.run(
        project, asked["text"], asked["limit"], provenances=asked["provenances"], words_first=True
    )
    output = search_output(
        outcome.hits,
        service.clock(),
        service.settings.own_ids() or service.settings.person(),
        explain=asked["explain"],
        on_team=False,
        as_json=asked["json"],
    )
    return {"text": "", "path": WARM_PATH, "output": output, "notice": outcome.notice}
