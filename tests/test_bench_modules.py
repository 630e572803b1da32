"""Every module of `python -m bench` imports with the test dependencies (a rename in src must not break the bench)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
# Run inside their own venvs with packages the test extra does not carry.
OWN_VENV = {"peers_basic_memory"}


@pytest.mark.parametrize("name", sorted(p.stem for p in BENCH.glob("*.py") if p.stem not in OWN_VENV))
def test_the_bench_module_imports(name: str) -> None:
    importlib.import_module(f"bench.{name}")
