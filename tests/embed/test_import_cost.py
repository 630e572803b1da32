"""Hooks import orcmem on every prompt: importing orcmem.embed must not pull in the heavy libraries."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("numpy", "onnxruntime", "fastembed", "tokenizers", "huggingface_hub", "urllib.request", "tarfile")


def test_importing_the_package_loads_no_model_library() -> None:
    code = f"import sys, orcmem.embed; print([m for m in {HEAVY!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
    assert result.stderr == ""
