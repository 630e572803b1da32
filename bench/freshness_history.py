"""The freshness check (docs/freshness.md) on real release histories: memories citing files and symbols at an old
release of a well-known pure Python package, checked after the tree becomes the new release, then again after
switching back to the old one.

Data: the release sdists from PyPI (`pip download --no-deps --no-binary :all:`), cached in
$ORCMEM_BENCH_SDISTS (default ~/.cache/orcmem-bench/sdists); without them (and no registry to fetch them from) the
section says so and is skipped. Each old release is committed to a fresh git repository and memories are written
citing its files the way agents write them (the path in prose, `name`, `name()`, `Class.method`, a private
`_name` or an exception bare in prose, a test of a `tests/test_*.py` file); the new release replaces the tree
(committed, as a release is) and `check_freshness` runs; then the old commit is checked out again and it runs once
more. The ground truth is `bench.code_truth`: Python's `ast` over both releases and git's rename detection, no
code or rule of the check's.

`python -m bench.freshness_history`; `python -m bench` reports it.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench.code_truth import Symbol, Tree, citable, git_renames, index_tree, verdict
from orcmem.host.workspace import locate
from orcmem.models.types import NewMemory, Source
from orcmem.service.memory_service import MemoryService

RELEASES = (  # (project on PyPI, old release, new release): all but httpx moved their package under src/
    ("click", "7.0", "8.1.7"),
    ("flask", "1.0.4", "3.0.3"),
    ("jinja2", "2.10.3", "3.1.4"),
    ("requests", "2.25.1", "2.32.3"),
    ("werkzeug", "0.14.1", "3.0.3"),
    ("itsdangerous", "0.24", "2.2.0"),  # one module, itsdangerous.py, split into a package
    ("httpx", "0.18.2", "0.27.2"),  # stayed at the top; private modules (`_client.py`), `HTTPStatusError`
)
PER_KIND = {"function": 40, "private": 20, "class": 25, "exception": 20, "method": 45, "test": 25}
STILL_IMPORTED = 20  # more memories per package whose symbol the new release still imports but no longer defines
TARGET = 0.97  # precision and recall of "possibly stale"
CACHE = Path(os.environ.get("ORCMEM_BENCH_SDISTS", Path.home() / ".cache" / "orcmem-bench" / "sdists"))
# How agents write about code, by what the symbol is ({name} as the memory writes it: `Class.method` for a method,
# {bare} its last part); each memory's title or body names the cited file's path in prose too.
STYLES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "function": (
        ("in backticks", "Notes on {path}", "`{name}` in {path} is where this is handled; change it there"),
        ("as a call", "{path} gotcha", "call {name}() before anything else in {path}, the rest relies on it"),
        ("bare in prose", "About {path}", "The {name} helper in {path} must stay backward compatible."),
    ),
    "private": (("private, bare in prose", "{path} internals", "{path} keeps the real work in {name}; wrap it"),),
    "class": (
        ("class, bare in prose", "About {path}", "{name} in {path} is the one to subclass for custom behaviour."),
        ("in backticks", "Notes on {path}", "Build a `{name}` once (see {path}) and reuse it across calls"),
    ),
    "exception": (
        ("exception, bare in prose", "Errors from {path}", "{path} raises {name} on bad input; callers catch it"),
    ),
    "method": (
        ("`Class.method`", "Notes on {path}", "`{name}` in {path} returns early on empty input; keep that"),
        ("Class.method() in prose", "{path} gotcha", "{name}() in {path} is called once per request"),
        ("method as a call", "{path} gotcha", "{bare}() in {path} mutates its argument: copy first"),
    ),
    "test": (("a test, its file in prose", "Tests of {path}", "{path} has {name}, run it after touching this"),),
}


@dataclass
class Tally:
    """Memories judged, truly stale, marked, and marked and truly stale."""

    memories: int = 0
    truly_stale: int = 0
    marked: int = 0
    caught: int = 0

    def add(self, stale: bool, marked: bool) -> None:
        """Count one memory."""
        self.memories += 1
        self.truly_stale += stale
        self.marked += marked
        self.caught += stale and marked

    def plus(self, other: Tally) -> Tally:
        """Both summed."""
        return Tally(*(a + b for a, b in zip(self.counts(), other.counts(), strict=True)))

    def counts(self) -> tuple[int, int, int, int]:
        """The four counts."""
        return self.memories, self.truly_stale, self.marked, self.caught


@dataclass
class PackageResult:
    """One package's figures: at the new release, and back at the old one."""

    name: str
    old: str
    new: str
    at_new: Tally = field(default_factory=Tally)
    back: Tally = field(default_factory=Tally)  # the old commit checked out again: every symbol is there
    moved_files: int = 0  # memories whose cited file is gone from its path in the new release
    followed: int = 0  # of those, citations that followed the file to its new path
    check_s: float = 0.0
    by_style: dict[str, Tally] = field(default_factory=dict)
    by_case: dict[str, Tally] = field(default_factory=dict)
    wrong: list[str] = field(default_factory=list)  # a few misjudged memories, to read


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "-c", "user.email=b@b", "-c", "user.name=b", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


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


def _replace_tree(root: Path, archive: Path) -> None:
    """The tree becomes the release in `archive` (the .git folder kept)."""
    for entry in root.iterdir():
        if entry.name != ".git":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    _unpack(archive, root)


def _kind(symbol: Symbol) -> str:
    return "private" if symbol.kind == "function" and symbol.name.startswith("_") else symbol.kind


def choose(symbols: list[Symbol], seed: str, still_imported: set[Symbol]) -> list[tuple[Symbol, str, str, str]]:
    """Up to PER_KIND symbols of each kind, then up to STILL_IMPORTED of `still_imported` not chosen yet, each with
    its memory's style label, title and body."""
    rng = random.Random(seed)
    picked: list[Symbol] = []
    for kind, count in PER_KIND.items():
        pool = [symbol for symbol in symbols if _kind(symbol) == kind]
        picked += rng.sample(pool, min(count, len(pool)))
    rest = sorted(still_imported - set(picked), key=lambda symbol: (symbol.path, symbol.written))
    picked += rng.sample(rest, min(STILL_IMPORTED, len(rest)))
    chosen = []
    for kind in PER_KIND:
        for n, symbol in enumerate(symbol for symbol in picked if _kind(symbol) == kind):
            label, title, body = STYLES[kind][n % len(STYLES[kind])]
            words = {"path": symbol.path, "name": symbol.written, "bare": symbol.name}
            named = symbol if "{bare}" not in body else replace(symbol, owner=None)  # what the memory names
            chosen.append((named, label, title.format(**words), body.format(**words)))
    return chosen


def run_package(project_name: str, old: str, new: str, work: Path) -> PackageResult | None:
    """One package: memories at the old release, checked at the new one, then back at the old one."""
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
    old_commit = _git(root, "rev-parse", "HEAD")
    old_tree = Tree(index_tree(root))
    _unpack(new_sdist, work / project_name / "new")  # read apart first, to find the symbols still only imported
    ahead = Tree(index_tree(work / project_name / "new"))
    symbols = citable(old_tree.index)
    imported = {symbol for symbol in symbols if verdict(symbol, ahead, {}).case == "gone, still imported"}
    chosen = choose(symbols, f"{project_name}-{old}", imported)
    svc = MemoryService.open(home, vectors=False)
    try:
        svc.settings.set_enabled(True)
        project = svc.project(locate(root))
        assert project is not None
        cites: dict[str, tuple[Symbol, str]] = {}  # memory id -> the symbol it names, its style
        for i, (symbol, label, title, body) in enumerate(chosen):
            memory = NewMemory("lesson", f"{title} ({i})", body, Source.AGENT, files=(symbol.path,))
            cites[svc.record(project, memory).memory.id] = (symbol, label)
        svc.check_freshness(project)
        _replace_tree(root, new_sdist)
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "-m", f"{project_name} {new}")
        new_tree, renames = Tree(index_tree(root)), git_renames(root, old_commit, "HEAD")
        started = time.perf_counter()
        report = svc.check_freshness(project)
        result.check_s = time.perf_counter() - started
        marked = {memory_id: reason for memory_id, _title, reason, _since in report.stale}
        for memory_id, (symbol, label) in cites.items():
            truth = verdict(symbol, new_tree, renames)
            result.at_new.add(truth.stale, memory_id in marked)
            result.by_style.setdefault(label, Tally()).add(truth.stale, memory_id in marked)
            result.by_case.setdefault(truth.case, Tally()).add(truth.stale, memory_id in marked)
            if not (root / symbol.path).is_file():
                result.moved_files += 1
                result.followed += svc.get(project, memory_id).files != (symbol.path,)
            if truth.stale != (memory_id in marked) and len(result.wrong) < 6:
                said = marked.get(memory_id, "fresh")
                result.wrong.append(f"{symbol.path} `{symbol.written}`: truth {truth.case}; said {said}")
        _git(root, "checkout", "-q", old_commit)  # back to the old release, after citations followed renames
        back = {memory_id for memory_id, *_ in svc.check_freshness(project).stale}
        for memory_id, (symbol, _label) in cites.items():
            truth = verdict(symbol, old_tree, {})
            result.back.add(truth.stale, memory_id in back)
            if truth.stale != (memory_id in back) and len(result.wrong) < 6:
                result.wrong.append(f"back at {old}: {symbol.path} `{symbol.written}` marked, truth {truth.case}")
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


def _scores(tally: Tally) -> str:
    return f"{_ratio(tally.caught, tally.marked):.3f} | {_ratio(tally.caught, tally.truly_stale):.3f}"


def _summed(tallies: list[Tally]) -> Tally:
    total = Tally()
    for tally in tallies:
        total = total.plus(tally)
    return total


def render(results: list[PackageResult]) -> list[str]:
    """The report section."""
    head = [
        "## Freshness on real release histories",
        "",
        "`python -m bench.freshness_history`: for each package, its old release's sdist (from PyPI, cached in",
        "`~/.cache/orcmem-bench/sdists`) committed to a git repository, and memories written citing one of its Python",
        "files each and naming one symbol of it the way agents write them (below); then the new release's sdist",
        "replaces the tree and is committed, and the check runs; then the old commit is checked out again and it runs",
        "once more (every cited symbol is there again: any mark is a false alarm).",
        "",
        "The ground truth (`bench/code_truth.py`) shares no code or rule with the check: both releases parsed with",
        "Python's `ast`; a symbol is fresh when it is still *defined* (def, class, or assignment at module or class",
        "level; an import is not a definition) in the cited file's successor (same path, under `src/`, renamed by",
        "`git diff -M` between the releases, or the module turned into a package) or anywhere else in the new tree",
        "(moved: fresh); `Class.method` must be defined in a class of that name or one of its bases.",
        "",
    ]
    if not results:
        return [*head, "Skipped: the sdists could not be had (no cache, no package index).", ""]
    rows = [
        "| package | releases | memories | truly stale | marked | precision | recall | files moved (followed) "
        "| marked back at the old release | check |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        rows.append(
            f"| {r.name} | {r.old} → {r.new} | {r.at_new.memories} | {r.at_new.truly_stale} | {r.at_new.marked} | "
            f"{_scores(r.at_new)} | {r.moved_files} ({r.followed}) | {r.back.marked} | {r.check_s:.2f} s |"
        )
    at_new, back = _summed([r.at_new for r in results]), _summed([r.back for r in results])
    both = at_new.plus(back)
    rows.append(
        f"| **all** | | {at_new.memories} | {at_new.truly_stale} | {at_new.marked} | {_scores(at_new)} | "
        f"{sum(r.moved_files for r in results)} ({sum(r.followed for r in results)}) | {back.marked} | |"
    )
    precision, recall = _ratio(both.caught, both.marked), _ratio(both.caught, both.truly_stale)
    met = "met" if min(precision, recall) >= TARGET else "**missed**"
    tail = [
        "",
        f"Both checks together ({both.memories} judgements): precision **{precision:.3f}**, recall "
        f"**{recall:.3f}**. Target: both at least {TARGET}: {met}.",
        "",
        "By how the memory names the symbol (at the new release):",
        "",
        "| the name written | memories | truly stale | marked | precision | recall |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label in dict.fromkeys(label for styles in STYLES.values() for label, _title, _body in styles):
        tallies = [r.by_style[label] for r in results if label in r.by_style]
        if tallies:
            tally = _summed(tallies)
            tail.append(f"| {label} | {tally.memories} | {tally.truly_stale} | {tally.marked} | {_scores(tally)} |")
    tail += ["", "By what the ground truth found (at the new release):", ""]
    tail += ["| the symbol at the new release | memories | marked |", "|---|---:|---:|"]
    cases = sorted({case for r in results for case in r.by_case})
    for case in cases:
        tally = _summed([r.by_case[case] for r in results if case in r.by_case])
        tail.append(f"| {case} | {tally.memories} | {tally.marked} |")
    wrong = [f"- {r.name}: {line}" for r in results for line in r.wrong]
    tail.append("")
    if wrong:
        tail += ["Misjudged memories (up to six per package), to read:", "", *wrong, ""]
    return [*head, *rows, *tail]


def main() -> None:
    """Print the section."""
    print("\n".join(render(run())))


if __name__ == "__main__":
    main()
