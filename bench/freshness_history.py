"""The freshness check (docs/freshness.md) on real release histories: memories citing files and functions at an old
release of a well-known pure Python package, checked after the tree becomes the new release.

Data: the release sdists from PyPI (`pip download --no-deps --no-binary :all:`), cached in
$ORCMEM_BENCH_SDISTS (default ~/.cache/orcmem-bench/sdists); without them (and no registry to fetch them from) the
section says so and is skipped. Each old release is committed to a fresh git repository, memories are written
citing its files and naming one function, class or method each, then the new release replaces the tree (committed,
as a release is) and `check_freshness` runs. The ground truth is computed independently with Python's `ast`:
a memory is stale when the name it cites is defined (def, class, or assignment) nowhere in the new release's
Python files; a moved file whose named symbol survives is fresh.

`python -m bench.freshness_history`; `python -m bench` reports it.
"""

from __future__ import annotations

import ast
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from orcmem.host.workspace import locate
from orcmem.models.types import NewMemory, Source
from orcmem.service.memory_service import MemoryService

RELEASES = (  # (project on PyPI, old release, new release): each moved its package under src/ in between
    ("click", "7.0", "8.1.7"),
    ("flask", "1.0.4", "3.0.3"),
    ("jinja2", "2.10.3", "3.1.4"),
    ("requests", "2.25.1", "2.32.3"),
    ("werkzeug", "0.14.1", "3.0.3"),
    ("itsdangerous", "0.24", "2.2.0"),  # one module, itsdangerous.py, split into a package
)
PER_PACKAGE = 200  # memories per package: three quarters name one thing (the headline), a quarter two
TWO_NAMES = 3  # the style whose memory names a second thing, the file's import: judged apart
TARGET = 0.97  # precision and recall of "possibly stale"
CACHE = Path(os.environ.get("ORCMEM_BENCH_SDISTS", Path.home() / ".cache" / "orcmem-bench" / "sdists"))
# How agents write about code: a name in backticks, a call, and the name bare in prose (found only when its shape
# says it is code); the title names the file.
STYLES = (
    ("Notes on {path}", "`{name}` in {path} is where this is handled; change it there and keep the signature"),
    ("{path} gotcha", "call {name}() before anything else in {path}, it sets up state the rest relies on"),
    ("About {path}", "The {name} in {path} must stay backward compatible: downstream code relies on it."),
    ("How {path} works", "`{name}` ({path}) builds on `{other}`, which the module imports; read both before editing"),
)


@dataclass
class PackageResult:
    """One package's figures."""

    name: str
    old: str
    new: str
    memories: int = 0
    truly_stale: int = 0
    marked: int = 0
    caught: int = 0
    moved_files: int = 0  # memories whose cited file is gone from its path in the new release
    followed: int = 0  # of those, citations that followed the file to its new path
    check_s: float = 0.0
    by_style: list[tuple[int, int, int, int]] = field(default_factory=list)  # memories, truly stale, marked, caught
    wrong: list[str] = field(default_factory=list)  # a few misjudged memories, to read


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=b@b", "-c", "user.name=b", *args], check=True, capture_output=True
    )


def sdist(project: str, version: str) -> Path | None:
    """The cached sdist of a release, downloaded once with pip; None when it cannot be had."""
    wanted = f"{project}-{version}".lower()

    def cached() -> Path | None:
        return next((f for f in CACHE.glob("*.tar.gz") if f.name.lower() == f"{wanted}.tar.gz"), None)

    try:
        CACHE.mkdir(parents=True, exist_ok=True)
        if (found := cached()) is not None:
            return found
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:"]
            + [f"{project}=={version}", "-d", str(CACHE)],
            capture_output=True,
            timeout=300,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return cached()


def _unpack(archive: Path, into: Path) -> None:
    """The sdist's files under `into`, without its top folder."""
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = member.name.split("/", 1)
            if not member.isfile() or len(parts) < 2 or ".." in parts[1].split("/"):
                continue
            target = into / parts[1]
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            if source is not None:
                target.write_bytes(source.read())


def _python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if ".git" not in p.parts)


def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return None


def defined_names(tree: ast.Module) -> set[str]:
    """Every name a module defines at any depth: functions, classes and assigned names."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _imported(tree: ast.Module) -> list[str]:
    """The names a module imports (`from x import name`, `import name`), a memory's second name."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [alias.asname or alias.name.split(".")[0] for alias in node.names if alias.name != "*"]
    return [name for name in dict.fromkeys(found) if len(name) >= 3]


def mentioned_names(tree: ast.Module) -> set[str]:
    """Every name a module uses or imports: names, attributes, imported names."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name.split(".")[0])
    return names


def _citable(tree: ast.Module) -> list[str]:
    """The functions, classes and methods of a module a memory might name (no dunders, at least 3 letters)."""
    found = []
    for node in ast.walk(tree):
        is_named = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        if is_named and len(node.name) >= 3 and not node.name.startswith("__"):
            found.append(node.name)
    return list(dict.fromkeys(found))


def run_package(project_name: str, old: str, new: str, work: Path) -> PackageResult | None:
    """One package: memories at the old release, checked at the new one."""
    old_sdist, new_sdist = sdist(project_name, old), sdist(project_name, new)
    if old_sdist is None or new_sdist is None:
        return None
    result = PackageResult(project_name, old, new)
    root, home = work / project_name / "repo", work / project_name / "home"
    root.mkdir(parents=True)
    _unpack(old_sdist, root)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", f"{project_name} {old}")
    candidates = []
    for path in _python_files(root):
        tree = _parse(path)
        if tree is not None:
            rel = path.relative_to(root).as_posix()
            imported = _imported(tree) or ["os"]
            candidates += [(rel, name, imported[n % len(imported)]) for n, name in enumerate(_citable(tree))]
    rng = random.Random(f"{project_name}-{old}")
    chosen = rng.sample(candidates, min(PER_PACKAGE, len(candidates)))
    svc = MemoryService.open(home, vectors=False)
    try:
        svc.settings.set_enabled(True)
        project = svc.project(locate(root))
        assert project is not None
        cites: dict[str, tuple[str, str, str, int]] = {}  # memory id -> (path, name, second name, style)
        for i, (rel, name, other) in enumerate(chosen):
            title, body = STYLES[i % len(STYLES)]
            text = body.format(name=name, path=rel, other=other)
            memory = NewMemory("lesson", f"{title.format(path=rel)} ({i})", text, Source.AGENT, files=(rel,))
            cites[svc.record(project, memory).memory.id] = (rel, name, other, i % len(STYLES))
        svc.check_freshness(project)
        for entry in root.iterdir():  # the new release replaces the tree
            if entry.name != ".git":
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        _unpack(new_sdist, root)
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"{project_name} {new}")
        modules = [tree for path in _python_files(root) if (tree := _parse(path)) is not None]
        defines = [defined_names(tree) for tree in modules]
        mentions = [mentioned_names(tree) for tree in modules]
        defined = set().union(*defines)
        started = time.perf_counter()
        report = svc.check_freshness(project)
        result.check_s = time.perf_counter() - started
        marked = {memory_id for memory_id, *_ in report.stale}

        def gone(name: str, other: str, style: int) -> bool:
            if name not in defined:
                return True
            # two names: the second must still be used by a module that defines the first
            return style == TWO_NAMES and not any(
                name in d and other in m for d, m in zip(defines, mentions, strict=True)
            )

        truth = {memory_id for memory_id, (_rel, name, other, style) in cites.items() if gone(name, other, style)}
        for memory_id, (rel, *_rest) in cites.items():
            if not (root / rel).is_file():
                result.moved_files += 1
                result.followed += svc.get(project, memory_id).files != (rel,)
        reasons = {memory_id: reason for memory_id, _title, reason, _since in report.stale}
        one = {memory_id for memory_id, cite in cites.items() if cite[3] != TWO_NAMES}
        for memory_id in sorted(((marked - truth) | (truth - marked)) & one)[:6]:
            rel, name, _other, _style = cites[memory_id]
            verdict = reasons.get(memory_id, "fresh")
            result.wrong.append(f"{rel} `{name}`: truth {'stale' if memory_id in truth else 'fresh'}, said {verdict}")
        result.memories, result.truly_stale, result.marked = len(one), len(truth & one), len(marked & one)
        result.caught = len(marked & truth & one)
        for style in range(len(STYLES)):
            mine = {memory_id for memory_id, cite in cites.items() if cite[3] == style}
            result.by_style.append((len(mine), len(truth & mine), len(marked & mine), len(marked & truth & mine)))
    finally:
        svc.close()
    return result


def run(work: Path | None = None) -> list[PackageResult]:
    """Every package whose two sdists can be had."""
    work = work or Path(tempfile.mkdtemp(prefix="orcmem-bench-history-"))
    try:
        return [r for name, old, new in RELEASES if (r := run_package(name, old, new, work)) is not None]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def render(results: list[PackageResult]) -> list[str]:
    """The report section."""
    head = [
        "## Freshness on real release histories",
        "",
        "`python -m bench.freshness_history`: for each package, its old release's sdist (from PyPI, cached in",
        "`~/.cache/orcmem-bench/sdists`) committed to a git repository and memories written in a profile, each citing",
        "one of its Python files and naming one function, class or method of it (in backticks, as a call `name()`,",
        "or bare in prose); then the new release's sdist replaces the tree and is committed, and the check runs.",
        "Ground truth, computed apart with Python's `ast`: stale when the name is defined (def, class, assignment)",
        "nowhere in the new release's Python files; a moved file whose named symbol survives counts as fresh. The",
        "table and the target are about these memories. A fourth kind, judged apart below, also names something the",
        "file imports; its truth: stale when the cited name is defined nowhere or no module defining it still uses",
        "the second name.",
        "",
    ]
    if not results:
        return [*head, "Skipped: the sdists could not be had (no cache, no package index).", ""]
    rows = [
        "| package | releases | memories | truly stale | marked | precision | recall | files moved (followed) "
        "| check |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        rows.append(
            f"| {r.name} | {r.old} → {r.new} | {r.memories} | {r.truly_stale} | {r.marked} | "
            f"{_ratio(r.caught, r.marked):.3f} | {_ratio(r.caught, r.truly_stale):.3f} | "
            f"{r.moved_files} ({r.followed}) | {r.check_s:.2f} s |"
        )
    caught, marked, truth = (sum(getattr(r, k) for r in results) for k in ("caught", "marked", "truly_stale"))
    precision, recall = _ratio(caught, marked), _ratio(caught, truth)
    met = "met" if min(precision, recall) >= TARGET else "**missed**"
    rows.append(
        f"| **all** | | {sum(r.memories for r in results)} | {truth} | {marked} | **{precision:.3f}** | "
        f"**{recall:.3f}** | {sum(r.moved_files for r in results)} ({sum(r.followed for r in results)}) | |"
    )
    wrong = [f"- {r.name}: {line}" for r in results for line in r.wrong]
    tail = ["", f"Target: precision and recall both at least {TARGET}: {met}.", "", "By how the memory names it:", ""]
    labels = (
        "in backticks",
        "as a call, `name()`",
        "bare in prose",
        "two names: the cited one in backticks and one the file imports (truth: stale when either is gone)",
    )
    tail += ["| the name written | memories | truly stale | marked | precision | recall |"]
    tail += ["|---|---:|---:|---:|---:|---:|"]
    for style, label in enumerate(labels):
        n, t, m, c = (sum(r.by_style[style][k] for r in results) for k in range(4))
        tail.append(f"| {label} | {n} | {t} | {m} | {_ratio(c, m):.3f} | {_ratio(c, t):.3f} |")
    tail.append("")
    if wrong:
        tail += ["Misjudged memories (up to six per package), to read:", "", *wrong, ""]
    return [*head, *rows, *tail]


def main() -> None:
    """Print the section."""
    print("\n".join(render(run())))


if __name__ == "__main__":
    main()
