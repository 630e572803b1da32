"""Stand-in agent CLIs (real executables written into tmp_path) and the recorded envelopes they print."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.extract.support import StandIn

ENVELOPES = Path(__file__).parent.parent / "fixtures" / "envelopes" / "claude_print_result_envelopes.jsonl"

# What every stand-in does first: write down how it was started, then do its part.
_PRELUDE = """\
#!{python}
import json, os, signal, subprocess, sys, time
_stdin = sys.stdin.read()
with open({record!r}, "w", encoding="utf-8") as _f:
    json.dump({{"argv": sys.argv, "cwd": os.getcwd(), "stdin": _stdin, "env": dict(os.environ),
               "pid": os.getpid(), "pgid": os.getpgid(0),
               "files": sorted(os.listdir(os.getcwd()))}}, _f)
"""


def load_envelopes() -> dict[str, dict[str, Any]]:
    """The four recorded `claude -p --output-format json` envelopes, by what they show."""
    lines = [json.loads(line) for line in ENVELOPES.read_text(encoding="utf-8").splitlines() if line.strip()]
    max_turns, billing, logged_out, success = lines
    return {"max_turns": max_turns, "billing": billing, "logged_out": logged_out, "success": success}


@pytest.fixture(scope="session")
def envelopes() -> dict[str, dict[str, Any]]:
    """The recorded envelopes."""
    return load_envelopes()


@pytest.fixture
def make_cli(tmp_path: Path) -> Callable[[str, str], StandIn]:
    """Write an executable named `name` into tmp_path/bin whose behaviour after recording is `body` (Python)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)

    def make(name: str, body: str) -> StandIn:
        path = bin_dir / name
        record = tmp_path / f"{name}.record.json"
        path.write_text(
            _PRELUDE.format(python=sys.executable, record=str(record)) + textwrap.dedent(body), encoding="utf-8"
        )
        path.chmod(0o755)
        return StandIn(path, record)

    return make


@pytest.fixture
def clean_env(tmp_path: Path) -> dict[str, str]:
    """A small environment for stand-ins: PATH and HOME, plus a CLAUDECODE that must not reach the CLI."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "CLAUDECODE": "1",
        "KEEP_ME": "yes",
    }
