"""orcmem under load: agent sessions, distilling workers, the MCP server and the Memory page at once (bench.load)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench import load

SECONDS_ENV = "ORCMEM_LOAD_SECONDS"  # a shorter run while developing; the scenario is 60 s


@pytest.mark.long
def test_nothing_is_lost_and_no_error_reaches_a_user_under_load(tmp_path: Path) -> None:
    seconds = float(os.environ.get(SECONDS_ENV, "60"))
    result = load.run(seconds, work=tmp_path / "load")
    print("\n" + "\n".join(load.render(result)))
    problems = "\n".join([*result.lost, *result.errors])
    # Every path really ran, or the checks below would prove nothing.
    assert result.prompt_load.samples > 0 and result.prompt_idle.samples == load.IDLE_SAMPLES
    assert all(result.records[path] > 0 for path in load.RECORD_PATHS), result.records
    assert result.searches.samples > 0 and result.pages.samples > 0
    assert result.runs_ended > 0 and result.distilled > 0
    # No lost write: every reported success is in the database, every queued run was distilled.
    assert result.lost == [], problems
    assert result.runs_done == result.runs_ended
    assert result.memories_after == result.memories_before + sum(result.records.values()) + result.distilled
    # No error reached a user, and the file is intact. The p95 figures are reported above, not asserted.
    assert result.error_count == 0, problems
    assert result.integrity == "ok"
    assert result.ok
