"""Every ingest test runs with the parsers' safety net off, so a handler bug fails the test instead of hiding."""

from __future__ import annotations

import pytest

from orcmem.ingest import common


@pytest.fixture(autouse=True)
def handler_errors_surface(monkeypatch: pytest.MonkeyPatch) -> None:
    """Record handlers raise instead of counting the line as skipped."""
    monkeypatch.setattr(common, "RECORD_ERRORS", ())
