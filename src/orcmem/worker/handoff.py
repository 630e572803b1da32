"""Vectors for what a command wrote, made by another process, so the command returns at once: the session's warm
server when one runs (its model is loaded), else a background `orcmem worker`. The memory is found by words at
once and by meaning moments later."""

from __future__ import annotations

from pathlib import Path

from orcmem.host.warm import ask
from orcmem.worker.control import spawn_worker, worker_running

WARM_SERVER = "the running orcmem mcp"
BACKGROUND_WORKER = "a background orcmem worker"


def hand_off_embedding(home: Path) -> str:
    """Have every memory lacking a vector embedded elsewhere; says who does it."""
    answer, _why = ask(str(home), {"embed": True})
    if answer is not None and answer.get("embedding") is True:
        return WARM_SERVER
    if not worker_running(home):
        spawn_worker(home)
    return BACKGROUND_WORKER
