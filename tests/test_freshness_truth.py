"""The ground truth of the history bench (bench/code_truth.py), on small trees: defined versus imported, moved
under src/, a method through its base class, a deleted file."""

from __future__ import annotations

from pathlib import Path

from bench.code_truth import Symbol, Tree, citable, index_tree, verdict

OLD = {
    "pkg/core.py": (
        "import os\n\n\ndef load(path):\n    return path\n\n\ndef _helper():\n    pass\n\n\n"
        "class BadInput(ValueError):\n    pass\n\n\nclass Client:\n    def send(self):\n        pass\n\n"
        "    retries = 3\n"
    ),
    "pkg/gone.py": "def vanish():\n    pass\n",
    "tests/test_core.py": "def test_load():\n    def local():\n        pass\n",
}
NEW = {
    "src/pkg/core.py": (
        "from pkg.base import Base\nfrom other import _helper\n\n\nclass Client(Base):\n    pass\n\n\n"
        "try:\n    from fast import load\nexcept ImportError:\n    load = None\n"
    ),
    "src/pkg/base.py": "class Base:\n    def send(self):\n        pass\n",
    "src/pkg/errors.py": "class BadInput(ValueError):\n    pass\n",
    "tests/test_core.py": "def test_other():\n    pass\n",
}


def tree(root: Path, files: dict[str, str]) -> Tree:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return Tree(index_tree(root))


def test_the_truth_reads_definitions_not_imports(tmp_path: Path) -> None:
    old, new = tree(tmp_path / "old", OLD), tree(tmp_path / "new", NEW)
    symbols = {symbol.written: symbol for symbol in citable(old.index)}
    assert sorted(symbols) == ["BadInput", "Client", "Client.send", "_helper", "load", "test_load", "vanish"]
    assert symbols["BadInput"].kind == "exception" and symbols["test_load"].kind == "test"
    cases = {written: verdict(symbol, new, {}).case for written, symbol in symbols.items()}
    assert cases == {
        "BadInput": "moved, file kept",  # defined in errors.py now
        "Client": "in place",  # under src/
        "Client.send": "in place",  # through its base class
        "_helper": "gone, still imported",  # imported, defined nowhere
        "load": "in place",  # assigned in the fallback branch: a definition
        "test_load": "gone, file kept",
        "vanish": "gone, file deleted",
    }
    bare = Symbol("pkg/core.py", "retries", "Client", "method")
    assert verdict(bare, new, {}).stale  # an attribute neither Client nor its base defines any more
