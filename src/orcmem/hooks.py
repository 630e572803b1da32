"""Agent hooks: read the hook's JSON on stdin, do the quick part, return at once. They fail open and silently.

Kept free of click and of the embedding stack: a hook runs on every session end and every turn.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from orcmem.extract.constants import DISTILLING_ENV_VAR
from orcmem.profile import home_dir
from orcmem.redact import redact

MAX_STDIN_BYTES = 1 << 20
LOG_NAME = "hooks.log"


def _read_payload(stream: TextIO) -> dict[str, Any]:
    raw = stream.read(MAX_STDIN_BYTES)
    payload = json.loads(raw) if raw.strip() else {}
    if not isinstance(payload, dict):
        raise ValueError("hook input is not a JSON object")
    return payload


def _log(home: Path, event: str, message: str) -> None:
    """One line per failure in $ORCMEM_HOME/logs/hooks.log; never raises."""
    try:
        logs = home / "logs"
        logs.mkdir(parents=True, exist_ok=True, mode=0o700)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        with open(logs / LOG_NAME, "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} {event}: {redact(message)}\n")
    except OSError:
        pass


def _text(payload: dict[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value.strip() else None


def _ingest(payload: dict[str, Any], home: Path, *, ended: bool) -> None:
    """Ingest the session's transcript (what is new), mark the turn or the end, queue and start a worker."""
    from orcmem.service import MemoryService
    from orcmem.service.learning import Learning
    from orcmem.workspace import locate

    service = MemoryService.open(home, vectors=False)
    try:
        learning = Learning(service)
        if learning.extraction_allowed() is not None:
            return  # memory or extraction is off: nothing is read or kept
        transcript = _text(payload, "transcript_path")
        cwd = _text(payload, "cwd")
        session = _text(payload, "session_id")
        if transcript is None or cwd is None:
            return
        path = Path(transcript).expanduser()
        if not path.is_file():
            _log(home, "ingest", redact(f"no transcript at {path}"))
            return
        project = service.project(locate(Path(cwd)))
        assert project is not None
        result = learning.ingest(project, path, session_id=session, cwd=cwd, ended=ended)
        if not ended:
            service.store.runs.touch(result.run.id, service.clock())
        if ended:
            learning.queue(result.run)
        _ensure_worker(home)
    finally:
        service.close()


def _ensure_worker(home: Path) -> None:
    from orcmem.worker import spawn_worker, worker_running

    if not worker_running(home):
        spawn_worker(home)


def session_end(payload: dict[str, Any], home: Path) -> str:
    """SessionEnd: ingest the transcript and queue the run; never waits for a model."""
    _ingest(payload, home, ended=True)
    return ""


def stop(payload: dict[str, Any], home: Path) -> str:
    """Stop: ingest what the turn added and record it; the worker distils the session once it goes idle."""
    _ingest(payload, home, ended=False)
    # Codex requires JSON on stdout from a Stop hook; an empty object changes nothing for either agent.
    return "{}"


HOOKS: dict[str, Callable[[dict[str, Any], Path], str]] = {
    "session-end": session_end,
    "stop": stop,
}


def main(argv: list[str], stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Run one hook by name; any failure is logged and the hook exits 0 with nothing on stdout."""
    if os.environ.get(DISTILLING_ENV_VAR):
        return 0  # this agent was started by orcmem to distil a run: its hooks must not feed orcmem again
    home = home_dir()
    name = argv[0] if argv else ""
    handler = HOOKS.get(name)
    if handler is None:
        print(f"orcmem: unknown hook {name!r}; hooks: {', '.join(HOOKS)}", file=sys.stderr)
        return 2
    try:
        output = handler(_read_payload(stdin or sys.stdin), home)
    except Exception as exc:  # a hook must never block or break the agent
        _log(home, name, f"{type(exc).__name__}: {exc} | {traceback.format_exc(limit=3)!r}")
        return 0
    if output:
        (stdout or sys.stdout).write(output)
    return 0
