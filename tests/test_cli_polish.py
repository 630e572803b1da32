"""What a new user meets first on the command line: help, plurals, bodies from files and stdin, clear misses,
search results with their text and scores, and servers that Ctrl-C ends with status 130."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ORCMEM = [sys.executable, "-m", "orcmem"]


def orcmem(*args: str, stdin: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ORCMEM, *args], input=stdin, capture_output=True, text=True, cwd=cwd, timeout=60)


def test_hook_help_and_a_bare_group_print_help_and_succeed() -> None:
    result = orcmem("hook", "--help")
    assert result.returncode == 0 and result.stdout.startswith("Usage: orcmem hook") and result.stderr == ""
    result = orcmem("memory")
    assert result.returncode == 0 and result.stdout.startswith("Usage: orcmem memory") and result.stderr == ""
    assert orcmem("hook").returncode == 2  # a hook with no name is a mistake, said in one line
    assert "Usage: orcmem [OPTIONS] COMMAND" in orcmem().stdout


def test_a_body_comes_from_standard_input_or_a_file(run, project_dir: Path, tmp_path: Path) -> None:
    run("memory", "on")
    body = "Run `make test` first.\nIt builds the fixtures the suite reads."
    result = subprocess.run(
        [*ORCMEM, "--project", str(project_dir), "add", "--type", "command", "--title", "Test order", "--body", "-"],
        input=body,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    memory_id = result.stdout.strip()
    assert json.loads(run("show", memory_id, "--json").stdout)["body"] == body
    (tmp_path / "body.txt").write_text("A longer body, kept in a file.")
    run("edit", memory_id, "--body-file", str(tmp_path / "body.txt"))
    assert json.loads(run("show", memory_id, "--json").stdout)["body"] == "A longer body, kept in a file."
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    refused = run("add", "--type", "lesson", "--title", "T", "--body-file", str(tmp_path / "latin1.txt"), ok=False)
    assert refused.exit_code == 1 and "not UTF-8 text" in refused.stderr
    both = run(
        "add", "--type", "lesson", "--title", "T", "--body", "x", "--body-file", str(tmp_path / "body.txt"), ok=False
    )
    assert both.exit_code == 2 and "one way" in both.stderr
    none = run("add", "--type", "lesson", "--title", "T", ok=False)
    assert none.exit_code == 2 and "--body -" in none.stderr


def test_recall_says_why_nothing_came_back(run) -> None:
    assert "memory is off" in run("recall", "how do I run the tests?").stdout
    run("memory", "on")
    assert "no active memory of this project matches" in run("recall", "how do I run the tests?").stdout


def test_search_shows_the_body_and_explains_with_scores(run) -> None:
    run("memory", "on")
    run(
        "add",
        "--type",
        "command",
        "--title",
        "Run the tests with scripts/check",
        "--body",
        "It installs   the\nextras first.",
    )
    out = run("search", "run the tests", "--explain").stdout
    assert "    It installs the extras first.\n" in out  # one line, whitespace folded
    assert "words #1 (BM25 " in out and "meaning -" in out  # no model here: words alone
    hit = json.loads(run("search", "run the tests", "--json").stdout)[0]
    assert hit["explain"]["word_score"] is not None and hit["explain"]["similarity"] is None


def test_one_memory_reads_in_the_singular(run, project_dir: Path) -> None:
    run("memory", "on")
    run("add", "--type", "lesson", "--title", "Singular", "--body", "one of it")
    assert "  1 memory  " in run("projects").stdout


def _initialize(request_id: int) -> str:
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params})


def test_every_request_read_before_stdin_closed_is_answered(project_dir: Path) -> None:
    lines = [
        _initialize(1),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "memory_recall", "arguments": {"prompt": "tests"}},
            }
        ),
    ]
    result = orcmem("mcp", "--project", str(project_dir), stdin="\n".join(lines) + "\n")
    answers = {message["id"]: message for message in map(json.loads, result.stdout.splitlines())}
    assert sorted(answers) == [1, 2, 3] and result.returncode == 0
    assert "Connection closed" not in result.stdout
    assert "result" in answers[2] and "result" in answers[3]


def _stop_with_ctrl_c(command: list[str], ready: str, cwd: Path, **popen: object) -> tuple[int, str, float]:
    """Start `command`, wait for `ready` on stderr or stdout, send SIGINT; (status, output, seconds to exit)."""
    proc = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen)  # type: ignore[call-overload]
    assert proc.stdout is not None
    seen = ""
    deadline = time.monotonic() + 60
    while ready not in seen and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen += line
    assert ready in seen, seen
    os.kill(proc.pid, signal.SIGINT)
    stopped = time.monotonic()
    rest, _ = proc.communicate(timeout=30)
    return proc.returncode, seen + rest, time.monotonic() - stopped


@pytest.mark.parametrize(
    ("args", "ready"),
    [
        (["ui", "--no-open", "--port", "0"], "Press Ctrl+C to stop"),
        (["mcp", "--http"], "listening on http://127.0.0.1:"),
    ],
)
def test_ctrl_c_ends_a_server_with_130_and_no_traceback(project_dir: Path, args: list[str], ready: str) -> None:
    status, output, seconds = _stop_with_ctrl_c([*ORCMEM, *args], ready, project_dir)
    assert status == 130, output
    assert "Traceback" not in output and seconds < 10


def test_ctrl_c_ends_the_stdio_server_with_130(project_dir: Path) -> None:
    proc = subprocess.Popen(
        [*ORCMEM, "mcp", "--project", str(project_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_initialize(1) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 2  # the SDK is serving: stdin stays open
    os.kill(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "Traceback" not in err
