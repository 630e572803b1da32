"""Helpers for the extraction tests: stand-in CLIs, and whether a process or a process group still runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class StandIn:
    """An executable stand-in for a CLI and what it recorded about its last run."""

    def __init__(self, path: Path, record: Path) -> None:
        self.path = path
        self.record_path = record

    @property
    def record(self) -> dict[str, Any]:
        """How the stand-in was last started: argv, cwd, stdin, env, pid, pgid and the files in its cwd."""
        return json.loads(self.record_path.read_text(encoding="utf-8"))

    @property
    def ran(self) -> bool:
        """Whether it was started at all."""
        return self.record_path.exists()


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is still in the group."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False
