"""Counts that tell whether src/ keeps its word (docs/architecture.md): `Any`, deferred imports, repeated blocks.

`python scripts/code_counts.py [--list]` prints the three counts (`--list` also prints where each one is);
`tests/test_code_counts.py` holds them to their limits.
- `Any`: every use of the name `typing.Any` in src/orcmem (annotations, casts, aliases).
- deferred imports: `import` statements inside a function body (not those under `if TYPE_CHECKING:`).
- repeated blocks: runs of six or more identical non-blank lines (stripped, comments and docstring-free lines
  alike) that stand in two places of src/orcmem.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "orcmem"
BLOCK_LINES = 6
# Lines too thin to make a block repeated on their own (a closing bracket, a bare keyword).
_THIN = frozenset({")", "]", "}", "),", "],", "},", "else:", "try:", "finally:", "return", "pass", '"""'})


@dataclass
class Counts:
    """What `count` found, each item a `path:line` with a word of context."""

    any_uses: list[str] = field(default_factory=list)
    deferred_imports: list[str] = field(default_factory=list)
    repeated_blocks: list[str] = field(default_factory=list)


def _modules(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*.py") if "__pycache__" not in path.parts)


def _any_uses(tree: ast.Module, where: str) -> list[str]:
    return [
        f"{where}:{node.lineno}"
        for node in ast.walk(tree)
        if (isinstance(node, ast.Name) and node.id == "Any") or (isinstance(node, ast.Attribute) and node.attr == "Any")
    ]


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _deferred_imports(tree: ast.Module, where: str) -> list[str]:
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                continue
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if in_function and isinstance(child, ast.Import | ast.ImportFrom):
                names = child.module if isinstance(child, ast.ImportFrom) else child.names[0].name
                found.append(f"{where}:{child.lineno} {names}")
            visit(child, inside)

    visit(tree, False)
    return found


def _repeated_blocks(files: dict[str, list[str]]) -> list[str]:
    """Each place where six identical meaningful lines stand again after an earlier place."""
    seen: dict[tuple[str, ...], str] = {}
    runs: defaultdict[str, list[str]] = defaultdict(list)
    for where, lines in files.items():
        kept = [(number, line.strip()) for number, line in enumerate(lines, 1) if line.strip()]
        last_end = -1
        for start in range(len(kept) - BLOCK_LINES + 1):
            window = tuple(text for _, text in kept[start : start + BLOCK_LINES])
            if sum(text not in _THIN and not text.startswith("#") for text in window) < BLOCK_LINES - 1:
                continue
            first = seen.setdefault(window, f"{where}:{kept[start][0]}")
            if first != f"{where}:{kept[start][0]}" and start > last_end:
                runs[where].append(f"{where}:{kept[start][0]} repeats {first}")
                last_end = start + BLOCK_LINES - 1
    return [run for where in runs for run in runs[where]]


def count(root: Path = SRC) -> Counts:
    """Count `Any`, deferred imports and repeated six-line blocks in the package under `root`."""
    counts = Counts()
    texts: dict[str, list[str]] = {}
    for path in _modules(root):
        where = str(path.relative_to(root.parent))
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        counts.any_uses += _any_uses(tree, where)
        counts.deferred_imports += _deferred_imports(tree, where)
        texts[where] = text.splitlines()
    counts.repeated_blocks = _repeated_blocks(texts)
    return counts


def main(argv: list[str]) -> int:
    """Print the counts (and with `--list`, each place)."""
    counts = count()
    for name, items in (
        ("Any", counts.any_uses),
        ("deferred imports", counts.deferred_imports),
        ("repeated 6-line blocks", counts.repeated_blocks),
    ):
        print(f"{name}: {len(items)}")
        if "--list" in argv:
            for item in items:
                print(f"  {item}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
