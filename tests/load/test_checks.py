"""The load run's checks catch what they must: bad hook output, hidden errors, and a failed run in the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import load
from bench.common import Latency

GOOD = json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "- [lesson] x"}})


@pytest.mark.parametrize(
    ("code", "out", "err", "problem"),
    [
        (0, "", "", None),
        (0, GOOD, "", None),
        (1, "", "boom", "exit 1"),
        (None, "", "", "exit None"),  # killed at its timeout
        (0, "", "orcmem: database is locked", "stderr"),
        (0, "not json", "", "invalid output"),
        (0, GOOD.replace("UserPromptSubmit", "SessionStart"), "", "invalid output"),
        (0, json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit"}}), "", "invalid output"),
        (0, "[]", "", "invalid output"),
    ],
)
def test_a_prompt_hook_result_is_judged_as_claude_code_reads_it(code, out: str, err: str, problem) -> None:
    verdict = load._bad_hook_output(load.Called(code, out, err, 0.01))
    assert verdict is None if problem is None else verdict.startswith(problem)


def test_silent_failures_and_lock_errors_in_logs_count_as_errors(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True)
    (home / "logs" / "hooks.log").write_text("2026-01-01T00:00:00 session-end: StoreError: stayed locked\n")
    setup = load.Setup(tmp_path, home, tmp_path, tmp_path, "orcmem", {}, {})
    tally = load.Tally()
    load._scan_logs(setup, tally, {"orcmem mcp stderr": "apsw.BusyError: database is locked", "orcmem ui": ""})
    assert tally.error_count == 2
    assert tally.errors[0].startswith("hooks.log: ") and "database is locked" in tally.errors[1]


def result(**changes) -> load.LoadResult:
    figures = dict(
        seconds=60.0,
        elapsed_s=61.0,
        drain_s=3.0,
        setup_s=20.0,
        memories_before=2000,
        memories_after=2100,
        prompt_idle=Latency(30.0, 40.0, 40),
        prompt_load=Latency(90.0, 200.0, 900),
        prompt_hits=800,
        records={"cli": 10, "mcp_record": 45, "mcp_manage": 45},
        record_latency={path: Latency(50.0, 90.0, 10) for path in load.RECORD_PATHS},
        runs_ended=40,
        runs_done=40,
        distilled=40,
        workers=Latency(900.0, 5000.0, 50),
        unembedded=0,
        searches=Latency(20.0, 40.0, 200),
        pages=Latency(30.0, 60.0, 200),
        integrity="ok",
    )
    figures.update(changes)
    return load.LoadResult(**figures)


def test_the_report_gives_the_prompt_hook_idle_and_under_load_as_a_ratio() -> None:
    text = "\n".join(load.render(result()))
    assert text.startswith("## Under load\n")
    assert "{" not in text  # every placeholder filled in
    assert "| p50 | 30.0 ms | 90.0 ms | 3.0 times |" in text
    assert "| p95 | 40.0 ms | 200.0 ms | 5.0 times |" in text
    assert "`orcmem hook prompt` (89% got memories back) | 900" in text
    assert "**no**" not in text and result().ok


@pytest.mark.parametrize(
    "changes",
    [
        {"lost": ["mem_x was reported saved but is not in the database"]},
        {"runs_done": 39},
        {"error_count": 1, "errors": ["orcmem add: exit 1"]},
        {"integrity": "*** in database main ***\nPage 7: btreeInitPage() returns error code 11"},
    ],
)
def test_any_failure_fails_the_run_and_shows_in_the_report(changes: dict) -> None:
    failed = result(**changes)
    assert not failed.ok
    text = "\n".join(load.render(failed))
    assert "**no**" in text or failed.integrity in text
