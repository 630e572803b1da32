"""The ground truth of `bench.freshness_history`, built apart from the freshness check: it shares no code and no
rule with `orcmem.rules.freshness`, `orcmem.service.freshness` or `orcmem.host.code_state` (no regular
expression, no `git grep`). Both releases are parsed with Python's `ast`; a cited symbol is fresh at the new
release when it is still DEFINED there (a `def`, a `class`, or an assignment at module or class level; an import
is not a definition), in the cited file's successor or in any other file of the tree (moved, which counts as
fresh); a method written `Class.method` must be defined in a class of that name or in one of its bases.

A file's successor at the new release is found without the check's help: the same path, the same path under
`src/`, git's own rename detection between the two release commits, or the module turned into a package
(`pkg/mod.py` -> `pkg/mod/__init__.py`).
"""

from __future__ import annotations

import ast
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

MIN_NAME = 3  # shorter names are not cited
EXCEPTION_BASES = ("Error", "Exception", "Warning")


@dataclass
class ClassDefs:
    """One class: the names its body defines (methods, nested classes, attributes) and its bases' names."""

    members: set[str] = field(default_factory=set)
    bases: list[str] = field(default_factory=list)
    methods: set[str] = field(default_factory=set)  # the members defined by `def` (what a memory cites)


@dataclass
class ModuleDefs:
    """What one Python file defines at module level, its classes, and the names it imports."""

    names: set[str] = field(default_factory=set)
    functions: set[str] = field(default_factory=set)  # the names defined by `def` (what a memory cites)
    classes: dict[str, ClassDefs] = field(default_factory=dict)
    imported: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class Symbol:
    """A citable symbol of the old release: its file, its name, the class holding it (a method), and its kind."""

    path: str
    name: str
    owner: str | None  # the class of a method
    kind: str  # function, class, exception, method, test

    @property
    def written(self) -> str:
        """The symbol as a memory writes it: `name`, or `Class.method`."""
        return f"{self.owner}.{self.name}" if self.owner else self.name


def _targets(node: ast.stmt) -> list[str]:
    """The plain names an assignment binds (`x = ...`, `x: int = ...`, `a, b = ...`)."""
    if isinstance(node, ast.Assign):
        found = []
        for target in node.targets:
            parts = target.elts if isinstance(target, ast.Tuple) else [target]
            found += [part.id for part in parts if isinstance(part, ast.Name)]
        return found
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def _base_name(base: ast.expr) -> str | None:
    if isinstance(base, ast.Name):
        return base.id
    if isinstance(base, ast.Attribute):
        return base.attr
    return None


def _body_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """A block's statements with those under `if`, `try` and `with` lifted up (still module or class level)."""
    flat: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If):
            flat += _body_statements(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            handlers = [stmt for handler in node.handlers for stmt in handler.body]
            flat += _body_statements(node.body + handlers + node.orelse + node.finalbody)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            flat += _body_statements(node.body)
        else:
            flat.append(node)
    return flat


def _class_defs(node: ast.ClassDef) -> ClassDefs:
    found = ClassDefs(bases=[name for base in node.bases if (name := _base_name(base))])
    for stmt in _body_statements(node.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.members.add(stmt.name)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.methods.add(stmt.name)
        found.members.update(_targets(stmt))
    return found


def module_defs(source: bytes) -> ModuleDefs | None:
    """What a Python file defines; None when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found = ModuleDefs()
    for stmt in _body_statements(tree.body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.names.add(stmt.name)
            if not isinstance(stmt, ast.ClassDef):
                found.functions.add(stmt.name)
            else:
                found.classes[stmt.name] = _class_defs(stmt)
        found.names.update(_targets(stmt))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.imported.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return found


def index_tree(root: Path) -> dict[str, ModuleDefs]:
    """Every Python file of a tree (outside .git) by its relative path, with what it defines."""
    index = {}
    for path in sorted(root.rglob("*.py")):
        if ".git" in path.parts or not path.is_file():
            continue
        defs = module_defs(path.read_bytes())
        if defs is not None:
            index[path.relative_to(root).as_posix()] = defs
    return index


def _is_exception(name: str, defs: ClassDefs) -> bool:
    return name.endswith(EXCEPTION_BASES) or any(base.endswith(EXCEPTION_BASES) for base in defs.bases)


def citable(index: dict[str, ModuleDefs]) -> list[Symbol]:
    """The symbols of a release a memory might name: module-level functions and classes, and the methods of those
    classes (defined by `def`; no dunders, at least MIN_NAME letters), each with its kind."""
    found = []
    for path, defs in index.items():
        is_test_file = path.rsplit("/", 1)[-1].startswith("test_")
        for name in sorted(defs.names):
            if len(name) < MIN_NAME or name.startswith("__"):
                continue
            if name in defs.classes:
                kind = "exception" if _is_exception(name, defs.classes[name]) else "class"
                found.append(Symbol(path, name, None, kind))
                found += [
                    Symbol(path, member, name, "method")
                    for member in sorted(defs.classes[name].methods)
                    if len(member) >= MIN_NAME and not member.startswith("__")
                ]
            elif name in defs.functions:
                kind = "test" if is_test_file and name.startswith("test_") else "function"
                found.append(Symbol(path, name, None, kind))
    return found


def git_renames(root: Path, old: str, new: str) -> dict[str, str]:
    """Git's own rename detection between two commits: old path -> new path (Python files)."""
    out = subprocess.run(
        ["git", "-C", str(root), "diff", "-M", "--name-status", "-z", old, new],
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", errors="replace")
    fields = out.split("\x00")
    renames, at = {}, 0
    while at < len(fields) - 2:
        if fields[at].startswith("R"):
            renames[fields[at + 1]] = fields[at + 2]
            at += 3
        else:
            at += 2
    return renames


def successors(path: str, new: dict[str, ModuleDefs], renames: dict[str, str]) -> list[str]:
    """Where a file of the old release is at the new one: same path, under src/, renamed (git), or the module
    turned into a package; none when it was deleted."""
    stem = path.removesuffix(".py")
    shapes = [path, f"src/{path}", renames.get(path), f"{stem}/__init__.py", f"src/{stem}/__init__.py"]
    return [p for p in dict.fromkeys(shapes) if p is not None and p in new]


class Tree:
    """One release, indexed: which files define a name, and each class's members through its bases."""

    def __init__(self, index: dict[str, ModuleDefs]) -> None:
        """Index `index` (path -> what it defines)."""
        self.index = index
        self.classes: dict[str, list[ClassDefs]] = {}
        for defs in index.values():
            for name, cls in defs.classes.items():
                self.classes.setdefault(name, []).append(cls)

    def has_member(self, owner: str, member: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether a class named `owner` defines `member`, itself or through a base named in the tree."""
        if owner in seen:
            return False
        for cls in self.classes.get(owner, []):
            if member in cls.members or any(self.has_member(b, member, seen | {owner}) for b in cls.bases):
                return True
        return False

    def defines(self, path: str, symbol: Symbol) -> bool:
        """Whether the file at `path` defines the symbol (a method: in a class of that name there)."""
        defs = self.index[path]
        if symbol.owner is None:  # written bare: a function, a class or a method of any class of the file
            return symbol.name in defs.names or any(symbol.name in cls.members for cls in defs.classes.values())
        return symbol.owner in defs.classes and self.has_member(symbol.owner, symbol.name)

    def defined_anywhere(self, symbol: Symbol) -> bool:
        """Whether any file of the tree defines the symbol."""
        if symbol.owner is not None:
            return self.has_member(symbol.owner, symbol.name)
        return any(self.defines(path, symbol) for path in self.index)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The truth about one cited symbol at the new release: stale or not, and which case it is."""

    stale: bool
    case: str  # in place; moved (file kept, file gone); gone (file kept, still imported, file deleted)


def verdict(symbol: Symbol, tree: Tree, renames: dict[str, str]) -> Verdict:
    """Fresh when the symbol is defined in the file's successor or anywhere else in the new tree."""
    homes = successors(symbol.path, tree.index, renames)
    if any(tree.defines(home, symbol) for home in homes):
        return Verdict(False, "in place")
    if tree.defined_anywhere(symbol):
        return Verdict(False, "moved, file kept" if homes else "moved, file gone")
    if not homes:
        return Verdict(True, "gone, file deleted")
    imported = any((symbol.owner or symbol.name) in tree.index[home].imported for home in homes)
    return Verdict(True, "gone, still imported" if imported else "gone, file kept")
