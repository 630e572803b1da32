"""What scripts/code_counts.py counts in src/ stays within the limits docs/architecture.md gives."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANY_LIMIT = 60  # each one left has its reason (docs/architecture.md, Types)
# the fast paths and the optional extras only (docs/architecture.md, Imports); a ratchet: it may only come down
DEFERRED_IMPORT_LIMIT = 161
# one signature a wrapper repeats and one import list (docs/architecture.md): a ratchet, it may only come down
REPEATED_BLOCK_LIMIT = 0


def _code_counts():  # noqa: ANN202 - the script is not a package
    spec = importlib.util.spec_from_file_location("code_counts", ROOT / "scripts" / "code_counts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["code_counts"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_src_keeps_within_the_limits() -> None:
    counts = _code_counts().count()
    assert len(counts.any_uses) <= ANY_LIMIT, counts.any_uses
    assert len(counts.deferred_imports) <= DEFERRED_IMPORT_LIMIT, counts.deferred_imports
    assert len(counts.repeated_blocks) <= REPEATED_BLOCK_LIMIT, counts.repeated_blocks


def deferring_modules_not_named(deferred: list[str], doc: str) -> list[str]:
    """The modules in `deferred` (`orcmem/x/y.py:N name` items) that the Imports table of docs/architecture.md does
    not name (by file, or by a folder ending in `/`)."""
    table = doc[doc.index("Every module that defers an import") : doc.index("- Types tell the truth")]
    named = set(re.findall(r"`([\w/]+(?:\.py|/))", table))
    files = {item.split(":")[0].removeprefix("orcmem/") for item in deferred}
    return sorted(f for f in files if f not in named and not any(f.startswith(n) for n in named if n.endswith("/")))


def test_each_deferred_import_has_its_reason_written() -> None:
    """A module defers an import only where docs/architecture.md says why (the fast paths, heavy or optional
    packages)."""
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert deferring_modules_not_named(_code_counts().count().deferred_imports, doc) == []


def test_the_reason_check_sees_an_unnamed_module() -> None:
    doc = "Every module that defers an import | `host/warm.py` | `store/team_pool/` |\n- Types tell the truth"
    deferred = ["orcmem/host/warm.py:3 json", "orcmem/store/team_pool/server.py:9 psycopg", "orcmem/cli/x.py:4 os"]
    assert deferring_modules_not_named(deferred, doc) == ["cli/x.py"]


def test_each_count_sees_what_it_counts(tmp_path: Path) -> None:
    package = tmp_path / "orcmem"
    package.mkdir()
    block = "".join(f"    total += {n} * value\n" for n in range(7))
    (package / "one.py").write_text(
        "from typing import Any\n\n"
        "def f(value: Any) -> Any:\n"
        "    import json\n"
        "    total = 0\n" + block + "    return json.dumps(total)\n\n"
        "def g(value: int) -> int:\n"
        "    total = 0\n" + block + "    return total\n",
        encoding="utf-8",
    )
    ast.parse((package / "one.py").read_text(encoding="utf-8"))
    counts = _code_counts().count(package)
    assert len(counts.any_uses) == 2
    assert [item.split()[-1] for item in counts.deferred_imports] == ["json"]
    assert len(counts.repeated_blocks) == 1
